// api nvlink_error: an NVLink fault in mid-run as NCCL reports it: NCCL's WARN line for CUDA error 220
// ("uncorrectable NVLink error detected during the execution", Xid 74 on the host), then
// ncclUnhandledCudaError from ncclCommGetAsyncError from then on. The op itself goes on.
#include "kind_support.h"

namespace ncclfi::kinds {
namespace {

FaultAction resolve(const ParamReader&) {
  return ApiAction{AsyncError{NcclError::kUnhandledCudaError,
                              "Cuda failure 220 'uncorrectable NVLink error detected during the execution'"}};
}

}  // namespace

extern const FaultKindSpec kApiNvlinkError;
constinit const FaultKindSpec kApiNvlinkError{
    Layer::kApi,
    "nvlink_error",
    "the call goes on; NCCL's WARN for CUDA error 220 (uncorrectable NVLink error), then "
    "ncclCommGetAsyncError reports ncclUnhandledCudaError",
    kApiOps,
    {},
    resolve};

}  // namespace ncclfi::kinds
