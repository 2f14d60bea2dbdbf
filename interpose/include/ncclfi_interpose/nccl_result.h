// ncclResult_t for both front ends, and the core's NCCL error table (ncclfi/nccl_results.h) in that
// type. nccl.h gives the type when this host has it; the net shim also builds without it, with the codes
// as nccl.h (2.28) defines them. The switch has no default, so a code added to the table without a
// mapping here does not compile, and the static_assert checks that every mapped value is nccl.h's.
#pragma once

#include "ncclfi/nccl_results.h"

#if __has_include(<nccl.h>)
#include <nccl.h>
#else
typedef enum {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7,
  ncclNumResults = 8
} ncclResult_t;
#endif

namespace ncclfi {

constexpr ncclResult_t to_nccl_result(NcclError code) {
  switch (code) {
    case NcclError::kUnhandledCudaError:
      return ncclUnhandledCudaError;
    case NcclError::kSystemError:
      return ncclSystemError;
    case NcclError::kInternalError:
      return ncclInternalError;
    case NcclError::kInvalidArgument:
      return ncclInvalidArgument;
    case NcclError::kInvalidUsage:
      return ncclInvalidUsage;
    case NcclError::kRemoteError:
      return ncclRemoteError;
  }
  return ncclInternalError;
}

// Every code of the table maps to its own value, an error (neither success nor in-progress).
constexpr bool core_codes_match_nccl_h() {
  for (const auto& e : kNcclErrors) {
    if (static_cast<int>(to_nccl_result(e.code)) != to_int(e.code)) return false;
    if (to_int(e.code) <= static_cast<int>(ncclSuccess) || to_int(e.code) >= static_cast<int>(ncclInProgress))
      return false;
  }
  return true;
}
static_assert(core_codes_match_nccl_h(), "ncclfi/nccl_results.h disagrees with nccl.h");

}  // namespace ncclfi
