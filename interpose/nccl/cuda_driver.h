// The few CUDA driver functions `corrupt` and `gpu_hang` need, loaded at run time with
// dlopen("libcuda.so.1").
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
  // gpu_hang's stream wait, an optional group: a driver (or test double) without them still serves
  // corrupt; `stream_wait_missing` then says which are absent, and gpu_hang reports it.
  CUresult (*mem_host_register)(void*, size_t, unsigned int) = nullptr;
  CUresult (*mem_host_get_device_pointer)(CUdeviceptr*, void*, unsigned int) = nullptr;
  CUresult (*stream_wait_value_32)(CUstream, CUdeviceptr, cuuint32_t, unsigned int) = nullptr;
  std::string stream_wait_missing;
  // pcie_downgrade's lookup of the current GPU's PCI address, another optional group.
  CUresult (*ctx_get_device)(CUdevice*) = nullptr;
  CUresult (*device_get_pci_bus_id)(char*, int, CUdevice) = nullptr;
  std::string pci_missing;
  // op timing must not add host functions to a CUDA graph being captured; absent: timing is off.
  CUresult (*stream_is_capturing)(CUstream, CUstreamCaptureStatus*) = nullptr;
};

// The driver, loaded once; nullptr (with `error` set) when libcuda or a function is missing.
// NCCLFI_CUDA_DRIVER_LIB names another library (the CPU tests load a host-memory stand-in).
const CudaDriver* cuda_driver(std::string* error);

// Makes the context of `stream` current for the scope (for the NULL stream the primary context of
// `device`): what the preload enqueues on an op's stream must be in the context the op runs in.
class StreamContext {
 public:
  StreamContext(const CudaDriver& cu, CUstream stream, int device);
  ~StreamContext();
  StreamContext(const StreamContext&) = delete;
  StreamContext& operator=(const StreamContext&) = delete;
  const std::string& error() const { return error_; }  // "" when the context is current

 private:
  const CudaDriver& cu_;
  bool pushed_ = false;
  std::string error_;
};

}  // namespace ncclfi::preload
