// The registry of fault kinds, built from the list in ncclfi/fault_kind_list.h.
#include "ncclfi/fault_kind_list.h"

#include "kind_support.h"

namespace ncclfi {
namespace {
#define X(kind) &kinds::kind,
constexpr const FaultKindSpec* kKinds[] = {NCCLFI_FAULT_KINDS};
#undef X
}  // namespace

std::span<const FaultKindSpec* const> fault_kinds() {
  return kKinds;
}

}  // namespace ncclfi
