// The few CUDA driver functions `corrupt` needs, loaded at run time with dlopen("libcuda.so.1").
// The preload never links the CUDA runtime: a PyTorch process already has its own, and a second one
// (or a second libnccl) in the process would be a different bug from the one injected.
#pragma once

#include <cstddef>
#include <string>

#include <cuda.h>

namespace ncclfi::preload {

struct CudaDriver {
  CUresult (*init)(unsigned int) = nullptr;
  CUresult (*device_get)(CUdevice*, int) = nullptr;
  CUresult (*primary_ctx_retain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*stream_get_ctx)(CUstream, CUcontext*) = nullptr;
  CUresult (*ctx_push)(CUcontext) = nullptr;
  CUresult (*ctx_pop)(CUcontext*) = nullptr;
  CUresult (*mem_alloc_host)(void**, size_t) = nullptr;
  CUresult (*memcpy_2d_async)(const CUDA_MEMCPY2D*, CUstream) = nullptr;
  CUresult (*launch_host_func)(CUstream, CUhostFn, void*) = nullptr;
};

// The driver, loaded once; nullptr (with `error` set) when libcuda or a function is missing.
// NCCLFI_CUDA_DRIVER_LIB names another library (the CPU tests load a host-memory stand-in).
const CudaDriver* cuda_driver(std::string* error);

}  // namespace ncclfi::preload
