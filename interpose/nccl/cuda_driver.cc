#include "cuda_driver.h"

#include "ncclfi/params.h"

#include <dlfcn.h>

#include <mutex>

namespace ncclfi::preload {
namespace {

template <class Fn>
bool load(void* lib, const char* name, Fn& out, std::string& missing) {
  out = reinterpret_cast<Fn>(dlsym(lib, name));
  if (out == nullptr) missing += std::string(missing.empty() ? "" : ", ") + name;
  return out != nullptr;
}

}  // namespace

const CudaDriver* cuda_driver(std::string* error) {
  static std::once_flag once;
  static CudaDriver driver;
  static bool ok = false;
  static std::string load_error;
  std::call_once(once, [] {
    const char* name = ncclfi::Params::get().cuda_driver_lib.c_str();
    void* lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      const char* why = dlerror();
      load_error = std::string("cannot load ") + name + ": " + (why != nullptr ? why : "?");
      return;
    }
    std::string missing;
    // The _v2 names are the ones cuda.h maps the plain names to since CUDA 4/11.
    load(lib, "cuInit", driver.init, missing);
    load(lib, "cuDeviceGet", driver.device_get, missing);
    load(lib, "cuDevicePrimaryCtxRetain", driver.primary_ctx_retain, missing);
    load(lib, "cuStreamGetCtx", driver.stream_get_ctx, missing);
    load(lib, "cuCtxPushCurrent_v2", driver.ctx_push, missing);
    load(lib, "cuCtxPopCurrent_v2", driver.ctx_pop, missing);
    load(lib, "cuMemAllocHost_v2", driver.mem_alloc_host, missing);
    load(lib, "cuMemcpy2DAsync_v2", driver.memcpy_2d_async, missing);
    load(lib, "cuLaunchHostFunc", driver.launch_host_func, missing);
    if (!missing.empty()) {
      load_error = std::string(name) + " lacks " + missing;
      return;
    }
    // The optional group (gpu_hang); _v2 as above (plain cuStreamWaitValue32 is the older v1 entry).
    load(lib, "cuMemHostRegister_v2", driver.mem_host_register, driver.stream_wait_missing);
    load(lib, "cuMemHostGetDevicePointer_v2", driver.mem_host_get_device_pointer, driver.stream_wait_missing);
    load(lib, "cuStreamWaitValue32_v2", driver.stream_wait_value_32, driver.stream_wait_missing);
    load(lib, "cuCtxGetDevice", driver.ctx_get_device, driver.pci_missing);
    load(lib, "cuDeviceGetPCIBusId", driver.device_get_pci_bus_id, driver.pci_missing);
    driver.stream_is_capturing =
        reinterpret_cast<decltype(driver.stream_is_capturing)>(dlsym(lib, "cuStreamIsCapturing"));
    ok = driver.init(0) == CUDA_SUCCESS;
    if (!ok) load_error = "cuInit failed";
  });
  if (!ok && error != nullptr) *error = load_error;
  return ok ? &driver : nullptr;
}

StreamContext::StreamContext(const CudaDriver& cu, CUstream stream, int device) : cu_(cu) {
  CUcontext ctx = nullptr;
  if (stream != nullptr && cu.stream_get_ctx(stream, &ctx) != CUDA_SUCCESS) ctx = nullptr;
  if (ctx == nullptr) {
    CUdevice dev = 0;
    if (device < 0) {
      error_ = "device of the communicator unknown";
      return;
    }
    if (cu.device_get(&dev, device) != CUDA_SUCCESS || cu.primary_ctx_retain(&ctx, dev) != CUDA_SUCCESS) {
      error_ = "no CUDA context for device " + std::to_string(device);
      return;
    }
  }
  pushed_ = cu.ctx_push(ctx) == CUDA_SUCCESS;
  if (!pushed_) error_ = "cuCtxPushCurrent failed";
}

StreamContext::~StreamContext() {
  CUcontext popped = nullptr;
  if (pushed_) cu_.ctx_pop(&popped);
}

}  // namespace ncclfi::preload
