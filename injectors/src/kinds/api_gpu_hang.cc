// api gpu_hang: the call returns at once, but the op never starts on the GPU (for ms, or for ever): the
// host keeps going while the work never completes, as a lost network completion looks to a framework.
#include "kind_support.h"

namespace ncclfi::kinds {
namespace {

// Absent or 0: for ever (as for hang).
GpuHang gpu_hang_for(std::optional<double> ms) {
  return GpuHang{ms && *ms > 0 ? ms : std::nullopt};
}

constexpr ParamSpec kParams[] = {{.name = "ms",
                                  .type = ParamType::kNonNegNumber,
                                  .absent = "for ever (so does 0)",
                                  .meaning = "how long the op's stream waits before the op"}};

FaultAction resolve(const ParamReader& p) {
  return ApiAction{gpu_hang_for(p.optional_number("ms"))};
}

}  // namespace

extern const FaultKindSpec kApiGpuHang;
// Only the ops: they carry the stream the wait goes on (group end and init have none).
constinit const FaultKindSpec kApiGpuHang{
    Layer::kApi, "gpu_hang", "the call returns; the op's stream waits before the op (for ms, or for ever)",
    kApiOps,     kParams,    resolve};

}  // namespace ncclfi::kinds
