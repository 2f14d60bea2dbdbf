// The libibverbs calls the wrapper answers itself; each calls the real library's default version and adds
// what the verbs faults need (verbs_shim.h). Everything else is forwarded untouched by the generated stubs.
#include "intercepts.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "real_ibverbs.h"
#include "verbs_shim.h"

namespace ncclfi::verbs {
namespace {

template <class Fn>
Fn real(const char* name) {
  return reinterpret_cast<Fn>(real_function(name));
}

ibv_device** get_device_list(int* num) {
  static const auto fn = real<ibv_device** (*)(int*)>("ibv_get_device_list");
  if (fn == nullptr) {
    // No real library: report "no devices" as libibverbs does without a driver, so NCCL falls back.
    std::fprintf(stderr, "libncclfi-ibverbs: no real libibverbs (%s): no devices\n",
                 real_library_status().c_str());
    if (num != nullptr) *num = 0;
    errno = ENOSYS;
    return nullptr;
  }
  return fn(num);
}

ibv_context* open_device(ibv_device* dev) {
  static const auto fn = real<ibv_context* (*)(ibv_device*)>("ibv_open_device");
  ibv_context* ctx = fn(dev);
  if (ctx != nullptr) on_open_device(ctx);
  return ctx;
}

int close_device(ibv_context* ctx) {
  static const auto fn = real<int (*)(ibv_context*)>("ibv_close_device");
  on_close_device(ctx);
  return fn(ctx);
}

int destroy_cq(ibv_cq* cq) {
  static const auto fn = real<int (*)(ibv_cq*)>("ibv_destroy_cq");
  on_destroy_cq(cq);
  return fn(cq);
}

// NCCL moves each QP to INIT with IBV_QP_PORT (ncclIbInitQp): that is where the wrapper learns its port.
int modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int mask) {
  static const auto fn = real<int (*)(ibv_qp*, ibv_qp_attr*, int)>("ibv_modify_qp");
  const int rc = fn(qp, attr, mask);
  if (rc == 0 && attr != nullptr) on_modify_qp(qp, *attr, mask);
  return rc;
}

int destroy_qp(ibv_qp* qp) {
  static const auto fn = real<int (*)(ibv_qp*)>("ibv_destroy_qp");
  on_destroy_qp(qp);
  return fn(qp);
}

// The exported ibv_query_port (IBVERBS_1.1) takes the size of the oldest struct ibv_port_attr; NCCL calls it
// when the context has no query_port op.
int query_port(ibv_context* ctx, uint8_t port, ibv_port_attr* attr) {
  static const auto fn = real<int (*)(ibv_context*, uint8_t, ibv_port_attr*)>("ibv_query_port");
  const int rc = fn(ctx, port, attr);
  if (rc == 0) on_query_port(ctx, port, attr);
  return rc;
}

// IBVERBS_1.16 and later: the port's rate in 100 Mbit/s, which NCCL 2.30 prefers to active_speed x width.
int query_port_speed(ibv_context* ctx, uint8_t port, uint64_t* speed) {
  static const auto fn = real<int (*)(ibv_context*, uint8_t, uint64_t*)>("ibv_query_port_speed");
  const int rc = fn(ctx, port, speed);
  if (rc != 0) return rc;
  static const auto query = real<int (*)(ibv_context*, uint8_t, ibv_port_attr*)>("ibv_query_port");
  ibv_port_attr attr{};
  if (query(ctx, port, &attr) == 0) *speed = on_query_port_speed(ctx, port, *speed, attr);
  return rc;
}

struct Intercept {
  const char* name;
  void* fn;
  bool without_real;  // answers even when the real library lacks the call
};
const Intercept kIntercepts[] = {
    {"ibv_get_device_list", reinterpret_cast<void*>(&get_device_list), true},
    {"ibv_open_device", reinterpret_cast<void*>(&open_device), false},
    {"ibv_close_device", reinterpret_cast<void*>(&close_device), false},
    {"ibv_destroy_cq", reinterpret_cast<void*>(&destroy_cq), false},
    {"ibv_modify_qp", reinterpret_cast<void*>(&modify_qp), false},
    {"ibv_destroy_qp", reinterpret_cast<void*>(&destroy_qp), false},
    {"ibv_query_port", reinterpret_cast<void*>(&query_port), false},
    {"ibv_query_port_speed", reinterpret_cast<void*>(&query_port_speed), false},
};

}  // namespace

void* intercept_for(const char* name) {
  for (const Intercept& i : kIntercepts) {
    // Only where the real library has the call: an intercept must not add a symbol version it lacks.
    if (std::strcmp(i.name, name) == 0)
      return i.without_real || real_function(name) != nullptr ? i.fn : nullptr;
  }
  return nullptr;
}

}  // namespace ncclfi::verbs
