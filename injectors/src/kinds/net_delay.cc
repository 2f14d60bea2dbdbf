// net delay: completions are reported late.
#include "kind_support.h"

namespace ncclfi::kinds {

extern const FaultKindSpec kNetDelay;
constinit const FaultKindSpec kNetDelay{Layer::kNet,
                                        "delay",
                                        "completions are reported late",
                                        kNetPosts,
                                        kCompletionDelayParams,
                                        resolve_completion_delay<NetAction>,
                                        {.duration_param = "ms", .rate = true}};

}  // namespace ncclfi::kinds
