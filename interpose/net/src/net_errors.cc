#include <cerrno>

#include "net_backend.h"

namespace ncclfi::net {

ncclResult_t to_nccl_result(NetStatus status) {
  if (status == kNetOk) return ncclSuccess;
  if (status > kNcclStatusBase && status < kNcclStatusBase + static_cast<int>(ncclNumResults)) {
    return static_cast<ncclResult_t>(status - kNcclStatusBase);
  }
  switch (-status) {
    case ECONNRESET:
    case ECONNREFUSED:
    case ECONNABORTED:
    case EPIPE:
    case ETIMEDOUT:
    case EHOSTUNREACH:
    case ENETUNREACH:
      return ncclRemoteError;
    case EINVAL:
      return ncclInvalidArgument;
    case EMSGSIZE:  // a send larger than the posted receive (NCCL treats a truncated receive as an error)
      return ncclInvalidUsage;
    case ENOTSUP:
      return ncclInternalError;
    default:
      return ncclSystemError;
  }
}

const char* net_status_name(NetStatus status) {
  if (status == kNetOk) return "ok";
  if (status > kNcclStatusBase) {
    switch (to_nccl_result(status)) {
      case ncclUnhandledCudaError:
        return "ncclUnhandledCudaError";
      case ncclSystemError:
        return "ncclSystemError";
      case ncclInternalError:
        return "ncclInternalError";
      case ncclInvalidArgument:
        return "ncclInvalidArgument";
      case ncclInvalidUsage:
        return "ncclInvalidUsage";
      case ncclRemoteError:
        return "ncclRemoteError";
      case ncclInProgress:
        return "ncclInProgress";
      default:
        return "ncclUnknownError";
    }
  }
  switch (-status) {
    case ECONNRESET:
      return "ECONNRESET";
    case ECONNREFUSED:
      return "ECONNREFUSED";
    case EPIPE:
      return "EPIPE";
    case ETIMEDOUT:
      return "ETIMEDOUT";
    case EINVAL:
      return "EINVAL";
    case EMSGSIZE:
      return "EMSGSIZE (message truncated)";
    case ENOMEM:
      return "ENOMEM";
    case ENOTSUP:
      return "ENOTSUP";
    case EPROTO:
      return "EPROTO";
    default:
      return "system error";
  }
}

}  // namespace ncclfi::net
