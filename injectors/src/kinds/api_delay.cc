// api delay: the call is held before it reaches NCCL.
#include "kind_support.h"

namespace ncclfi::kinds {
namespace {

constexpr ParamSpec kParams[] = {{.name = "ms",
                                  .type = ParamType::kNonNegNumber,
                                  .required = true,
                                  .meaning = "how long each hit call is held, in ms"},
                                 {.name = "jitter_ms",
                                  .type = ParamType::kNonNegNumber,
                                  .default_json = R"(0)",
                                  .meaning = "a seeded uniform draw in [0, jitter_ms] ms added on top"}};

FaultAction resolve(const ParamReader& p) {
  return ApiAction{Delay{p.number("ms"), p.number("jitter_ms")}};
}

}  // namespace

extern const FaultKindSpec kApiDelay;
constinit const FaultKindSpec kApiDelay{
    Layer::kApi, "delay", "the call is held before it reaches NCCL", kApiOpsAndGroupEnd,
    kParams,     resolve, {.duration_param = "ms", .rate = true}};

}  // namespace ncclfi::kinds
