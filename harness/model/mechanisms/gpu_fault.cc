// The CUDA runtime reported a fault of the GPU itself (an illegal address, a failed launch, an
// uncorrectable ECC error): the kernel died, and every later CUDA call of the process fails. On a real
// cluster this is where an NVIDIA Xid (13, 31, 43, 48, 79, ...) shows in the kernel log of that node.
#include "mechanism_spec.h"

namespace ncclfi::harness {

extern const MechanismSpec kGpuFaultMechanism{
    .name = "gpu_fault",
    .noticed_by =
        "the CUDA runtime reported a fault of the GPU (illegal address, launch failure, uncorrectable ECC)",
    .source = "CUDA, through PyTorch or NCCL",
    // PyTorch's C10_CUDA_CHECK prints "CUDA error: <cudaGetErrorString>"; NCCL's CUDACHECK prints
    // "Cuda failure '<string>'" (2.19 and later: "Cuda failure <code> '<string>'").
    .lines =
        {{"cuda.gpu_fault",
          R"((CUDA error: |Cuda failure (\d+ )?')(an illegal memory access was encountered|unspecified launch )"
          R"(failure|uncorrectable ECC error encountered|an illegal instruction was encountered|misaligned )"
          R"(address|hardware stack error))",
          "",
          "PyTorch's `CUDA error: <text>` or NCCL's `Cuda failure '<text>'` for `an illegal memory access "
          "was encountered`, `unspecified launch failure`, `uncorrectable ECC error encountered`, `an "
          "illegal "
          "instruction was encountered`, `misaligned address` or `hardware stack error`",
          R"(RuntimeError: CUDA error: an illegal memory access was encountered)", SignatureRole::kDetection,
          "", "CUDA error: %s (PyTorch); Cuda failure '%s' (NCCL)", "PyTorch 1.x to 2.11; NCCL 2.10 to 2.30",
          "pytorch/pytorch c10/cuda/CUDAException.h (C10_CUDA_CHECK); NVIDIA/nccl src/include/checks.h "
          "(CUDACHECK)",
          "NVIDIA/nccl#957 (`Cuda failure 'invalid argument'`)", "a kernel or a CUDA call failed on this GPU",
          "gpu_fault,nvlink", "the rank whose GPU failed (under MPS, also a rank sharing the GPU)"}},
    .doc = "outcomes.md#detection-mechanisms",
};

}  // namespace ncclfi::harness
