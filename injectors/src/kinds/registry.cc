// The list of fault kinds: one line per kind, in the order `ncclfi list faults` prints them. An
// explicit list, not self-registration, because ncclfi_core is a static library: the linker would drop
// a kind file that nothing references.
#include "kind_support.h"

// X(variable defined in kinds/<layer>_<kind>.cc)
#define NCCLFI_FAULT_KINDS \
  X(kNetDelay)             \
  X(kNetThrottle)          \
  X(kNetDrop)              \
  X(kNetCorrupt)           \
  X(kNetError)             \
  X(kNetConnectFail)       \
  X(kNetStall)             \
  X(kNetNicDown)           \
  X(kApiDelay)             \
  X(kApiHang)              \
  X(kApiGpuHang)           \
  X(kApiSkip)              \
  X(kApiError)             \
  X(kApiAsyncError)        \
  X(kApiNvlinkError)       \
  X(kApiCorrupt)           \
  X(kApiCrash)             \
  X(kApiInitFail)          \
  X(kApiInitHang)          \
  X(kApiBandwidthCap)      \
  X(kApiNvlinkDown)        \
  X(kApiPcieDowngrade)     \
  X(kProcStop)             \
  X(kProcKill)             \
  X(kLinkRate)             \
  X(kLinkDelay)            \
  X(kLinkLoss)             \
  X(kLinkCorrupt)          \
  X(kVerbsRetryExceeded)   \
  X(kVerbsWcError)         \
  X(kVerbsDelay)           \
  X(kVerbsDrop)            \
  X(kVerbsPortDown)        \
  X(kVerbsLinkDegrade)     \
  X(kVerbsPostError)

namespace ncclfi {
namespace kinds {
#define X(kind) extern const FaultKindSpec kind;
NCCLFI_FAULT_KINDS
#undef X
}  // namespace kinds

namespace {
#define X(kind) &kinds::kind,
constexpr const FaultKindSpec* kKinds[] = {NCCLFI_FAULT_KINDS};
#undef X
}  // namespace

std::span<const FaultKindSpec* const> fault_kinds() {
  return kKinds;
}

}  // namespace ncclfi
