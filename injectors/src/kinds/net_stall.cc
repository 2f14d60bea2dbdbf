// net stall: the connection reports no completion for ms, then resumes.
#include "kind_support.h"

namespace ncclfi::kinds {
namespace {

constexpr ParamSpec kParams[] = {{.name = "ms",
                                  .type = ParamType::kPositiveNumber,
                                  .required = true,
                                  .meaning = "how long the connection makes no progress"}};

FaultAction resolve(const ParamReader& p) {
  return NetAction{Stall{p.number("ms")}};
}

}  // namespace

extern const FaultKindSpec kNetStall;
constinit const FaultKindSpec kNetStall{Layer::kNet,
                                        "stall",
                                        "the connection reports no completion for ms, then resumes",
                                        kNetPosts,
                                        kParams,
                                        resolve,
                                        {.duration_param = "ms"}};

}  // namespace ncclfi::kinds
