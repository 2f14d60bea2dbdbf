// verbs delay: work completions are reported late.
#include "kind_support.h"

namespace ncclfi::kinds {

extern const FaultKindSpec kVerbsDelay;
constinit const FaultKindSpec kVerbsDelay{
    Layer::kVerbs,
    "delay",
    "ibv_poll_cq reports the completion late (later ones of its QP wait behind it)",
    kVerbsCompletions,
    kCompletionDelayParams,
    resolve_completion_delay<VerbsAction>,
    {.duration_param = "ms", .rate = true}};

}  // namespace ncclfi::kinds
