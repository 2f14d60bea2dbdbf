#include "gpu_hang.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <thread>

#include "cuda_driver.h"

namespace ncclfi::preload {
namespace {

// One page of our own, registered with the driver, per injection, never freed: the GPU may read the
// flag until the process ends, and a timer thread may still write it while the process tears CUDA
// down. Memory from cuMemHostAlloc would be freed with its context at exit, and that late write would
// then crash a process that was exiting normally.
constexpr size_t kFlagPage = 4096;

void release_after(uint32_t* flag, double ms) {
  std::thread([flag, ms] {
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
    std::atomic_ref<uint32_t>(*flag).store(1, std::memory_order_release);
  }).detach();
}

}  // namespace

std::string enqueue_gpu_hang(cudaStream_t stream, int device, std::optional<double> ms) {
  std::string error;
  const CudaDriver* cu = cuda_driver(&error);
  if (cu == nullptr) return error;
  if (!cu->stream_wait_missing.empty()) return "the CUDA driver lacks " + cu->stream_wait_missing;

  auto cu_stream = reinterpret_cast<CUstream>(stream);
  const StreamContext context(*cu, cu_stream, device);
  if (!context.error().empty()) return context.error();

  auto* flag = static_cast<uint32_t*>(std::aligned_alloc(kFlagPage, kFlagPage));
  if (flag == nullptr) return "out of host memory";
  std::atomic_ref<uint32_t>(*flag).store(0, std::memory_order_relaxed);
  CUresult rc =
      cu->mem_host_register(flag, kFlagPage, CU_MEMHOSTREGISTER_DEVICEMAP | CU_MEMHOSTREGISTER_PORTABLE);
  if (rc != CUDA_SUCCESS) std::free(flag);  // the driver never saw it
  CUdeviceptr flag_on_device = 0;
  if (rc == CUDA_SUCCESS) rc = cu->mem_host_get_device_pointer(&flag_on_device, flag, 0);
  if (rc == CUDA_SUCCESS)
    rc = cu->stream_wait_value_32(cu_stream, flag_on_device, 1, CU_STREAM_WAIT_VALUE_GEQ);
  if (rc != CUDA_SUCCESS) return "CUDA driver error " + std::to_string(static_cast<int>(rc));
  if (ms) release_after(flag, *ms);
  return "";
}

}  // namespace ncclfi::preload
