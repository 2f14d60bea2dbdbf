// net corrupt: exactly `bits` distinct bits of the payload flip (received bytes before completion).
#include "kind_support.h"

namespace ncclfi::kinds {
namespace {

constexpr std::string_view kNetRecv[] = {points::kNetIrecv};

constexpr ParamSpec kParams[] = {{.name = "bits",
                                  .type = ParamType::kPositiveInt,
                                  .default_json = R"(1)",
                                  .meaning = "how many bits flip"},
                                 {.name = "seed",
                                  .type = ParamType::kNonNegInt,
                                  .absent = "the trigger's seed, else the plan's",
                                  .meaning = "which bits: same seed, same bits"}};

FaultAction resolve(const ParamReader& p) {
  return NetAction{CorruptBits{p.integer("bits"), p.optional_integer("seed")}};
}

}  // namespace

extern const FaultKindSpec kNetCorrupt;
constinit const FaultKindSpec kNetCorrupt{
    Layer::kNet,
    "corrupt",
    "exactly `bits` distinct bits of the payload flip (received bytes before completion)",
    kNetRecv,
    kParams,
    resolve};

}  // namespace ncclfi::kinds
