// The NCCL result codes a fault may return: one table, used by the plan validator, by the front ends
// (which map each entry to nccl.h's enum and check the values at compile time) and by
// `ncclfi list faults`. A plan names a code by its number or by its name exactly as nccl.h spells it.
//
// Only the error codes 1..6 are accepted. ncclSuccess is not a failure. ncclInProgress (7) is not
// either: it tells a non-blocking caller to poll again, so returning it injects no error (a blocking
// caller would even read it as a protocol violation, and the net plugin API has no such state).
// NCCL 2.28 has no ncclTimeout; ncclNumResults (8) is a count, not a code.
#pragma once

#include <optional>
#include <span>
#include <string_view>

namespace ncclfi {

// The values are NCCL's (nccl.h, ncclResult_t); the preload and the net shim static_assert them.
enum class NcclError : int {
  kUnhandledCudaError = 1,
  kSystemError = 2,
  kInternalError = 3,
  kInvalidArgument = 4,
  kInvalidUsage = 5,
  kRemoteError = 6,
};

struct NcclErrorInfo {
  NcclError code;
  std::string_view name;     // as nccl.h spells it
  std::string_view meaning;  // what NCCL means by it
};

inline constexpr NcclErrorInfo kNcclErrors[] = {
    {NcclError::kUnhandledCudaError, "ncclUnhandledCudaError", "a call to CUDA failed"},
    {NcclError::kSystemError, "ncclSystemError", "a call to the system failed"},
    {NcclError::kInternalError, "ncclInternalError", "an internal check failed (NCCL or plugin bug)"},
    {NcclError::kInvalidArgument, "ncclInvalidArgument", "one argument is invalid"},
    {NcclError::kInvalidUsage, "ncclInvalidUsage", "the call is invalid (user error)"},
    {NcclError::kRemoteError, "ncclRemoteError", "a remote peer failed or a connection was lost"},
};

constexpr int to_int(NcclError code) {
  return static_cast<int>(code);
}

// The table entry of a name ("ncclRemoteError") or a number (6); nullopt when not an accepted code.
std::optional<NcclError> nccl_error_from_name(std::string_view name);
std::optional<NcclError> nccl_error_from_int(long long value);
std::string_view name_of(NcclError code);

}  // namespace ncclfi
