// The core's NCCL error table (ncclfi/nccl_results.h) in nccl.h's type. The switch has no default, so
// a code added to the table without a mapping here does not compile, and the static_assert checks
// that every mapped value is the one nccl.h defines.
#pragma once

#include <nccl.h>

#include "ncclfi/nccl_results.h"

namespace ncclfi::preload {

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

constexpr bool core_codes_match_nccl_h() {
  for (const auto& e : kNcclErrors) {
    if (static_cast<int>(to_nccl_result(e.code)) != to_int(e.code)) return false;
    if (to_int(e.code) <= static_cast<int>(ncclSuccess) || to_int(e.code) >= static_cast<int>(ncclInProgress))
      return false;
  }
  return true;
}
static_assert(core_codes_match_nccl_h(), "ncclfi/nccl_results.h disagrees with nccl.h");

}  // namespace ncclfi::preload
