#include "device_memory.h"

#include <dlfcn.h>

#include <mutex>
#include <vector>

#include "ncclfi/params.h"
#include "net_faults.h"

namespace ncclfi::net {
namespace {

// The driver API's types, declared here so the shim needs no cuda.h: CUresult is an int-sized enum,
// CUdeviceptr a 64-bit integer on every 64-bit platform, CUcontext and CUstream opaque pointers.
using CuResult = int;
using CuDevicePtr = unsigned long long;
using CuContext = void*;
using CuStream = void*;
constexpr unsigned kStreamNonBlocking = 0x1;  // CU_STREAM_NON_BLOCKING

struct Driver {
  CuResult (*ctx_get_current)(CuContext*) = nullptr;
  CuResult (*stream_create)(CuStream*, unsigned) = nullptr;
  CuResult (*memcpy_async)(CuDevicePtr, CuDevicePtr, size_t, CuStream) = nullptr;
  CuResult (*stream_synchronize)(CuStream) = nullptr;
  CuResult (*stream_destroy)(CuStream) = nullptr;
  std::string error;
};

template <typename Fn>
bool load(void* lib, const char* symbol, Fn* fn, std::string* error) {
  *fn = reinterpret_cast<Fn>(dlsym(lib, symbol));
  if (*fn == nullptr && error->empty()) *error = std::string("the CUDA driver has no ") + symbol;
  return *fn != nullptr;
}

const Driver& driver() {
  static Driver d;
  static std::once_flag once;
  std::call_once(once, [] {
    const std::string& name = Params::get().cuda_driver_lib;
    void* lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      d.error = "cannot load the CUDA driver " + name;
      return;
    }
    // cuda.h maps cuStreamDestroy to its _v2 symbol.
    load(lib, "cuCtxGetCurrent", &d.ctx_get_current, &d.error);
    load(lib, "cuStreamCreate", &d.stream_create, &d.error);
    load(lib, "cuMemcpyAsync", &d.memcpy_async, &d.error);
    load(lib, "cuStreamSynchronize", &d.stream_synchronize, &d.error);
    load(lib, "cuStreamDestroy_v2", &d.stream_destroy, &d.error);
  });
  return d;
}

CuDevicePtr address(const void* p) {
  return static_cast<CuDevicePtr>(reinterpret_cast<uintptr_t>(p));
}

// One copy, waited for: on `stream`, then synchronised.
bool copy(const Driver& d, CuStream stream, void* dst, const void* src, size_t bytes, const char* what,
          std::string* why) {
  CuResult rc = d.memcpy_async(address(dst), address(src), bytes, stream);
  if (rc == 0) rc = d.stream_synchronize(stream);
  if (rc != 0) *why = std::string("the copy ") + what + " failed (CUresult " + std::to_string(rc) + ")";
  return rc == 0;
}

}  // namespace

bool device_memory_reachable(std::string* why) {
  const Driver& d = driver();
  if (!d.error.empty()) {
    *why = d.error;
    return false;
  }
  CuContext ctx = nullptr;
  if (d.ctx_get_current(&ctx) != 0 || ctx == nullptr) {
    *why = "no CUDA context is current on the thread that posted the receive";
    return false;
  }
  return true;
}

bool flip_device_bits(void* data, size_t bytes, uint64_t nbits, uint64_t seed, std::string* why) {
  if (!device_memory_reachable(why)) return false;
  const Driver& d = driver();
  CuStream stream = nullptr;
  if (CuResult rc = d.stream_create(&stream, kStreamNonBlocking); rc != 0) {
    *why = "cuStreamCreate failed (CUresult " + std::to_string(rc) + ")";
    return false;
  }
  std::vector<char> host(bytes);
  bool ok = copy(d, stream, host.data(), data, bytes, "from the device", why);
  if (ok) {
    flip_bits(host.data(), bytes, nbits, seed);
    ok = copy(d, stream, data, host.data(), bytes, "to the device", why);
  }
  d.stream_destroy(stream);
  return ok;
}

}  // namespace ncclfi::net
