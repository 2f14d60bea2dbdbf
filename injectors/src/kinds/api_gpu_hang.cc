// api gpu_hang: the call returns at once, but the op never starts on the GPU (for ms, or for ever): the
// host keeps going while the work never completes, as a lost network completion looks to a framework.
#include "kind_support.h"

namespace ncclfi::kinds {

extern const FaultKindSpec kApiGpuHang;
// Only the ops: they carry the stream the wait goes on (group end and init have none).
constinit const FaultKindSpec kApiGpuHang{
    Layer::kApi,
    "gpu_hang",
    "the call returns; the op's stream waits before the op (for ms, or for ever)",
    kApiOps,
    kGpuHangMsParams,
    resolve_hang<GpuHang>,
    {.duration_param = "ms"}};

}  // namespace ncclfi::kinds
