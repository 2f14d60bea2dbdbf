// verbs delay: work completions are reported late.
#include "kind_support.h"

namespace ncclfi::kinds {
namespace {

constexpr ParamSpec kParams[] = {{.name = "ms",
                                  .type = ParamType::kNonNegNumber,
                                  .required = true,
                                  .meaning = "how long each hit completion is held, in ms"},
                                 {.name = "jitter_ms",
                                  .type = ParamType::kNonNegNumber,
                                  .default_json = R"(0)",
                                  .meaning = "a seeded uniform draw in [0, jitter_ms] ms added on top"}};

FaultAction resolve(const ParamReader& p) {
  return VerbsAction{Delay{p.number("ms"), p.number("jitter_ms")}};
}

}  // namespace

extern const FaultKindSpec kVerbsDelay;
constinit const FaultKindSpec kVerbsDelay{
    Layer::kVerbs,
    "delay",
    "ibv_poll_cq reports the completion late (later ones of its QP wait behind it)",
    kVerbsCompletions,
    kParams,
    resolve};

}  // namespace ncclfi::kinds
