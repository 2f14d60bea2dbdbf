#include "device_memory.h"

#include <dlfcn.h>

#include <mutex>
#include <vector>

#include "ncclfi/params.h"
#include "net_faults.h"

namespace ncclfi::net {
namespace {

// CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t bytes), declared here so the shim needs no
// cuda.h: CUresult is an int-sized enum and CUdeviceptr a 64-bit integer on every 64-bit platform.
using MemcpyFn = int (*)(unsigned long long, unsigned long long, size_t);

struct Driver {
  MemcpyFn memcpy = nullptr;
  std::string error;
};

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
    d.memcpy = reinterpret_cast<MemcpyFn>(dlsym(lib, "cuMemcpy"));
    if (d.memcpy == nullptr) d.error = name + " has no cuMemcpy";
  });
  return d;
}

unsigned long long address(const void* p) {
  return static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(p));
}

}  // namespace

bool device_memory_reachable(std::string* why) {
  const Driver& d = driver();
  if (d.memcpy == nullptr) *why = d.error;
  return d.memcpy != nullptr;
}

bool flip_device_bits(void* data, size_t bytes, uint64_t nbits, uint64_t seed, std::string* why) {
  const Driver& d = driver();
  if (d.memcpy == nullptr) {
    *why = d.error;
    return false;
  }
  std::vector<char> host(bytes);
  if (int rc = d.memcpy(address(host.data()), address(data), bytes); rc != 0) {
    *why = "cuMemcpy from the device failed (" + std::to_string(rc) + ")";
    return false;
  }
  flip_bits(host.data(), bytes, nbits, seed);
  if (int rc = d.memcpy(address(data), address(host.data()), bytes); rc != 0) {
    *why = "cuMemcpy to the device failed (" + std::to_string(rc) + ")";
    return false;
  }
  return true;
}

}  // namespace ncclfi::net
