// api hang: the calling thread blocks in the call (for ms, then the call goes on, or for ever).
#include "kind_support.h"

namespace ncclfi::kinds {
namespace {

// Absent or 0: for ever.
Hang hang_for(std::optional<double> ms) {
  return Hang{ms && *ms > 0 ? ms : std::nullopt};
}

constexpr ParamSpec kParams[] = {{.name = "ms",
                                  .type = ParamType::kNonNegNumber,
                                  .absent = "for ever (so does 0)",
                                  .meaning = "how long the call blocks"}};

FaultAction resolve(const ParamReader& p) {
  return ApiAction{hang_for(p.optional_number("ms"))};
}

}  // namespace

extern const FaultKindSpec kApiHang;
constinit const FaultKindSpec kApiHang{
    Layer::kApi,
    "hang",
    "the calling thread blocks in the call (for ms, then the call goes on, or for ever)",
    kApiOpsGroupEndAndAbort,
    kParams,
    resolve};

}  // namespace ncclfi::kinds
