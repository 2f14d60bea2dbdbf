// A non-owning reference to a callable (the wrappers' "forward to NCCL" lambdas), so the fault logic
// lives in .cc files without templates or std::function allocations.
#pragma once

#include <type_traits>
#include <utility>

namespace ncclfi::preload {

template <class Sig>
class FunctionRef;

template <class R, class... Args>
class FunctionRef<R(Args...)> {
 public:
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, FunctionRef>>>
  FunctionRef(F&& f)  // NOLINT(google-explicit-constructor): used like a function parameter
      : obj_(const_cast<void*>(static_cast<const void*>(&f))), call_([](void* obj, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(obj))(std::forward<Args>(args)...);
        }) {}
  R operator()(Args... args) const { return call_(obj_, std::forward<Args>(args)...); }

 private:
  void* obj_;
  R (*call_)(void*, Args...);
};

}  // namespace ncclfi::preload
