// The fault kinds, one line each, in the order `ncclfi list faults` prints them; kinds/registry.cc builds
// the registry from this list. An explicit list, not self-registration, because ncclfi_core is a static
// library: the linker would drop a kind file that nothing references.
//
// Each kind's spec is declared here too, so code that builds a fault of one given kind (a built-in plan
// such as the timeout matrix's) names it by its spec (kinds::kProcKill.kind) rather than by a string.
// Everything else asks a spec's traits (fault_kinds.h), never its name.
#pragma once

#include "ncclfi/fault_kinds.h"

// X(variable defined in kinds/<layer>_<kind>.cc)
#define NCCLFI_FAULT_KINDS      \
  X(kNetDelay)                  \
  X(kNetThrottle)               \
  X(kNetDrop)                   \
  X(kNetCorrupt)                \
  X(kNetError)                  \
  X(kNetConnectFail)            \
  X(kNetStall)                  \
  X(kNetNicDown)                \
  X(kApiDelay)                  \
  X(kApiHang)                   \
  X(kApiGpuHang)                \
  X(kApiSkip)                   \
  X(kApiError)                  \
  X(kApiAsyncError)             \
  X(kApiNvlinkError)            \
  X(kApiCorrupt)                \
  X(kApiCrash)                  \
  X(kApiInitFail)               \
  X(kApiInitHang)               \
  X(kApiBandwidthCap)           \
  X(kApiNvlinkDown)             \
  X(kApiPcieDowngrade)          \
  X(kApiBootstrapUnreachable)   \
  X(kProcStop)                  \
  X(kProcKill)                  \
  X(kLinkRate)                  \
  X(kLinkDelay)                 \
  X(kLinkLoss)                  \
  X(kLinkCorrupt)               \
  X(kVerbsRetryExceeded)        \
  X(kVerbsWcError)              \
  X(kVerbsLocalProtectionError) \
  X(kVerbsDelay)                \
  X(kVerbsDrop)                 \
  X(kVerbsPortDown)             \
  X(kVerbsLinkDegrade)          \
  X(kVerbsPostError)

namespace ncclfi::kinds {
#define X(kind) extern const FaultKindSpec kind;
NCCLFI_FAULT_KINDS
#undef X
}  // namespace ncclfi::kinds
