// The next definition of an NCCL entry point after the preload: dlsym(RTLD_NEXT), resolved on first
// use and cached. Never dlopen libnccl by name: a process may hold two NCCLs (PyTorch's pip one and a
// system one), and RTLD_NEXT finds the one this process actually linked. The public nccl* names are
// weak aliases of pnccl* in libnccl; if the weak name cannot be found the strong pnccl* one is tried.
#pragma once

#include <atomic>

namespace ncclfi::preload {

// Resolves `name` (then "p" + name) with RTLD_NEXT; returns nullptr when neither exists.
void* resolve_next(const char* name);

template <class Fn>
class RealSymbol {
 public:
  // constexpr: a function-local static RealSymbol is constant-initialised (no guard on the hot path).
  explicit constexpr RealSymbol(const char* name) : name_(name) {}

  // The real function, or nullptr when the loaded NCCL lacks it. Thread-safe: racing first calls
  // resolve the same address.
  Fn get() {
    void* p = ptr_.load(std::memory_order_acquire);
    if (__builtin_expect(p == nullptr, 0)) {
      p = resolve_next(name_);
      ptr_.store(p == nullptr ? missing() : p, std::memory_order_release);
    }
    return p == missing() ? nullptr : reinterpret_cast<Fn>(p);
  }

 private:
  // A non-null marker for "looked up, absent", so an absent symbol is looked up only once.
  static void* missing() { return reinterpret_cast<void*>(static_cast<__UINTPTR_TYPE__>(1)); }
  const char* name_;
  std::atomic<void*> ptr_{nullptr};
};

}  // namespace ncclfi::preload
