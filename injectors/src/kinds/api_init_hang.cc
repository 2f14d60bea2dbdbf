// api init_hang: communicator creation blocks (for ms, then goes on, or for ever).
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

extern const FaultKindSpec kApiInitHang;
constinit const FaultKindSpec kApiInitHang{
    Layer::kApi, "init_hang", "communicator creation blocks (for ms, then goes on, or for ever)",
    kApiInit,    kParams,     resolve};

}  // namespace ncclfi::kinds
