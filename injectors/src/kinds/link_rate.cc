// link rate: the node agent limits the rank's host's link with a token bucket (tc tbf).
#include "kind_support.h"

namespace ncclfi::kinds {
namespace {

constexpr std::string_view kPoints[] = {points::kLinkRate};

constexpr ParamSpec kParams[] = {{.name = "mbit",
                                  .type = ParamType::kPositiveNumber,
                                  .required = true,
                                  .meaning = "the rate the host may send at, Mbit/s"},
                                 {.name = "burst_kb",
                                  .type = ParamType::kPositiveNumber,
                                  .default_json = "32",
                                  .meaning = "the token bucket's size, KiB"}};

FaultAction resolve(const ParamReader& p) {
  return LinkAction{LimitRate{p.number("mbit"), p.number("burst_kb")}};
}

}  // namespace

extern const FaultKindSpec kLinkRate;
constinit const FaultKindSpec kLinkRate{
    Layer::kLink,
    "rate",
    "the host's link sends at most this rate (tc tbf, on the host of each targeted rank)",
    kPoints,
    kParams,
    resolve};

}  // namespace ncclfi::kinds
