// net throttle: the connection becomes a token bucket of that rate (no burst).
#include "kind_support.h"

namespace ncclfi::kinds {
namespace {

constexpr ParamSpec kParams[] = {{.name = "gbps",
                                  .type = ParamType::kPositiveNumber,
                                  .required = true,
                                  .meaning = "the rate per connection, Gbit/s"}};

FaultAction resolve(const ParamReader& p) {
  return NetAction{Throttle{p.number("gbps")}};
}

}  // namespace

extern const FaultKindSpec kNetThrottle;
constinit const FaultKindSpec kNetThrottle{
    Layer::kNet,   "throttle", "the connection becomes a token bucket of that rate (no burst)",
    kNetPosts,     kParams,    resolve,
    {.rate = true}};

}  // namespace ncclfi::kinds
