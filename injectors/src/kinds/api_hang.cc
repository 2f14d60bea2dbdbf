// api hang: the calling thread blocks in the call (for ms, then the call goes on, or for ever).
#include "kind_support.h"

namespace ncclfi::kinds {

extern const FaultKindSpec kApiHang;
constinit const FaultKindSpec kApiHang{
    Layer::kApi,
    "hang",
    "the calling thread blocks in the call (for ms, then the call goes on, or for ever)",
    kApiOpsGroupEndAndAbort,
    kHangMsParams,
    resolve_hang<Hang>,
    {.duration_param = "ms"}};

}  // namespace ncclfi::kinds
