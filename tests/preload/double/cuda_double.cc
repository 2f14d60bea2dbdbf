// A host-memory stand-in for the few CUDA driver calls the preload's `corrupt` and `gpu_hang` use,
// loaded through NCCLFI_CUDA_DRIVER_LIB in the CPU tests: device pointers are host pointers, copies run
// at once and host functions are called at once (stream order is call order). Each call is recorded in
// NCCL_DOUBLE_LOG next to the NCCL double's lines, so a test sees the order of op and fault. A stream
// wait is recorded when enqueued, and a thread watching its flag records "released" when the wait
// would end. Built a second time with NCCLFI_CUDA_DOUBLE_NO_STREAM_WAIT, without the stream-wait
// functions, as a driver that lacks them.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include <cuda.h>

namespace {

void record(const std::string& line) {
  static int fd = [] {
    const char* path = std::getenv("NCCL_DOUBLE_LOG");
    return path != nullptr ? open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644) : -1;
  }();
  if (fd < 0) return;
  std::string out = line + "\n";
  if (write(fd, out.data(), out.size()) < 0) std::abort();
}

std::string hex(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%#llx", static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(p)));
  return buf;
}

CUcontext g_ctx = reinterpret_cast<CUcontext>(0xc0);

}  // namespace

#define API extern "C" __attribute__((visibility("default"))) CUresult

API cuInit(unsigned int) {
  return CUDA_SUCCESS;
}
API cuDeviceGet(CUdevice* dev, int ordinal) {
  *dev = ordinal;
  return CUDA_SUCCESS;
}
API cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice) {
  *ctx = g_ctx;
  return CUDA_SUCCESS;
}
API cuStreamGetCtx(CUstream, CUcontext* ctx) {
  *ctx = g_ctx;
  return CUDA_SUCCESS;
}
API cuCtxPushCurrent_v2(CUcontext) {
  return CUDA_SUCCESS;
}
API cuCtxPopCurrent_v2(CUcontext* ctx) {
  *ctx = g_ctx;
  return CUDA_SUCCESS;
}
API cuMemAllocHost_v2(void** p, size_t bytes) {
  *p = std::malloc(bytes);
  return *p != nullptr ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
// The net shim's corrupt of a device receive (wrap mode over a GPUDirect plugin): synchronous, unified
// addressing; here every address is host memory.
API cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
  std::memcpy(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), bytes);
  record("cuMemcpy " + std::to_string(bytes));
  return CUDA_SUCCESS;
}
API cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D* c, CUstream stream) {
  const auto* src = c->srcMemoryType == CU_MEMORYTYPE_HOST
                        ? static_cast<const unsigned char*>(c->srcHost)
                        : reinterpret_cast<const unsigned char*>(c->srcDevice);
  auto* dst = c->dstMemoryType == CU_MEMORYTYPE_HOST ? static_cast<unsigned char*>(c->dstHost)
                                                     : reinterpret_cast<unsigned char*>(c->dstDevice);
  for (size_t row = 0; row < c->Height; ++row) {
    std::memcpy(dst + row * c->dstPitch, src + row * c->srcPitch, c->WidthInBytes);
  }
  record(std::string("cuMemcpy2DAsync ") + (c->dstMemoryType == CU_MEMORYTYPE_HOST ? "down" : "up") +
         " stream=" + hex(stream) + " width=" + std::to_string(c->WidthInBytes) +
         " height=" + std::to_string(c->Height));
  return CUDA_SUCCESS;
}
API cuLaunchHostFunc(CUstream stream, CUhostFn fn, void* user) {
  record("cuLaunchHostFunc stream=" + hex(stream));
  fn(user);
  return CUDA_SUCCESS;
}

// pcie_downgrade's lookup of the current GPU: device 0 at a fixed address (upper case, as the driver writes
// it).
API cuCtxGetDevice(CUdevice* device) {
  *device = 0;
  return CUDA_SUCCESS;
}

API cuDeviceGetPCIBusId(char* id, int len, CUdevice) {
  std::snprintf(id, static_cast<size_t>(len), "0000:1A:00.0");
  return CUDA_SUCCESS;
}

API cuStreamIsCapturing(CUstream, CUstreamCaptureStatus* status) {
  *status = CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}

#ifndef NCCLFI_CUDA_DOUBLE_NO_STREAM_WAIT
API cuMemHostRegister_v2(void* p, size_t bytes, unsigned int flags) {
  // The preload must ask for a device mapping: the GPU reads the flag through it.
  if (p == nullptr || bytes == 0 || (flags & CU_MEMHOSTREGISTER_DEVICEMAP) == 0)
    return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}
API cuMemHostGetDevicePointer_v2(CUdeviceptr* dev, void* p, unsigned int) {
  *dev = reinterpret_cast<CUdeviceptr>(p);
  return CUDA_SUCCESS;
}
API cuStreamWaitValue32_v2(CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags) {
  if (flags != CU_STREAM_WAIT_VALUE_GEQ) return CUDA_ERROR_INVALID_VALUE;
  record("cuStreamWaitValue32 stream=" + hex(stream) + " value=" + std::to_string(value));
  auto* flag = reinterpret_cast<uint32_t*>(addr);
  std::thread([stream, flag, value, since = std::chrono::steady_clock::now()] {
    // GEQ as the driver defines it: (int32_t)(*addr - value) >= 0.
    while (static_cast<int32_t>(std::atomic_ref<uint32_t>(*flag).load(std::memory_order_acquire) - value) < 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const auto waited = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since);
    record("released stream=" + hex(stream) +
           " after_ms=" + std::to_string(static_cast<long long>(waited.count())));
  }).detach();
  return CUDA_SUCCESS;
}
#endif
