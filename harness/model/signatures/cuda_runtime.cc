// CUDA refusing the GPU itself: what a process meets when a killed MPS client's error reaches it
// (failure-signatures.md, shared-GPU mode). Evidence; the judge weighs it (check_shared_gpu).
#include "signature_family.h"

namespace ncclfi::harness {

extern const SignatureFamily kCudaRuntimeFamily{
    .name = "cuda_runtime",
    .title = "CUDA refusing the GPU",
    .software = "the CUDA runtime and driver, through PyTorch or the workload",
    .lines = {{.id = "cuda.device_unavailable",
               .regex =
                   R"(CUDA-capable device\(s\) is/are busy or unavailable|\bcudaErrorDevicesUnavailable\b|)"
                   R"(\bCUDA_ERROR_DEVICE_UNAVAILABLE\b|\bcudaErrorMps\w+|\bCUDA_ERROR_MPS_\w+)",
               .shown = "`CUDA-capable device(s) is/are busy or unavailable`, `cudaErrorDevicesUnavailable`, "
                        "`CUDA_ERROR_DEVICE_UNAVAILABLE`, `cudaErrorMps...`, `CUDA_ERROR_MPS_...`",
               .example = "RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable",
               .role = SignatureRole::kEvidence,
               .implies = "cuda_unavailable",
               .format = "CUDA-capable device(s) is/are busy or unavailable",
               .versions = "CUDA 11 to 13 (cudaGetErrorString of cudaErrorDevicesUnavailable, 46)",
               .cited = "CUDA runtime API, cudaError enum (cudaErrorDevicesUnavailable, cudaErrorMps*)",
               .meaning = "the GPU refused a new context: exclusive mode, or an MPS server in a fatal state",
               .site = "configuration",
               .printed_by = "the process that asked for the GPU"}},
};

}  // namespace ncclfi::harness
