// The exported ncclNetPlugin_v11..v8 tables: thin per-version adapters over NetShim (the one internal
// API). Every entry point goes through guarded() (the shared barrier of ncclfi/effects.h), the only place
// where an exception is stopped and a NetStatus becomes an ncclResult_t, so nothing crosses NCCL's C ABI.
//
// NCCLFI_NET_STANDALONE builds a transport-only copy (no wrap, no faults) used as the inner plugin in the
// wrap-mode tests; NCCLFI_NET_MAX_VERSION limits the tables it exports (to test version adaptation).
#include <cstring>
#include <exception>

#include "ib_persona.h"
#include "ncclfi/effects.h"
#include "net_log.h"
#include "net_shim.h"

#ifndef NCCLFI_NET_MAX_VERSION
#define NCCLFI_NET_MAX_VERSION 11
#endif

#if NCCLFI_NET_MAX_VERSION < 11
// A copy exporting only old tables leaves the newer adapters unused.
#pragma GCC diagnostic ignored "-Wunused-function"
#endif

using ncclfi::net::NetShim;
using ncclfi::net::NetStatus;

namespace {

NetShim& shim() {
#ifdef NCCLFI_NET_STANDALONE
  return NetShim::instance({/*allow_wrap=*/false, /*allow_faults=*/false});
#else
  return NetShim::instance({/*allow_wrap=*/true, /*allow_faults=*/true});
#endif
}

// The exception barrier every front end shares (ncclfi/effects.h), reporting through NCCL's own logger.
void report(const char* where, const char* what) noexcept {
  NCCLFI_NET_WARN("%s: internal error: %s", where, what);
}

template <typename Call>
ncclResult_t guarded(const char* what, Call&& call) {
  return ncclfi::guarded(report, what, ncclInternalError, [&] {
    const NetStatus status = call();
    // In the IB persona the failure was told the way NCCL's IB transport tells it (or not at all, as it
    // does): NCCL's own trail of the returned code follows.
    if (status != ncclfi::net::kNetOk && !ncclfi::net::ib_persona()) {
      NCCLFI_NET_WARN("%s failed: %s", what, ncclfi::net::net_status_name(status));
    }
    return ncclfi::net::to_nccl_result(status);
  });
}

// The name NCCL knows the plugin by, chosen when the library is loaded (NCCL reads it right after
// dlopen, before init): "ncclfi", or "IB" in the IB persona. A test-only copy keeps its build-time name.
#ifdef NCCLFI_NET_PLUGIN_NAME
char g_plugin_name[32] = NCCLFI_NET_PLUGIN_NAME;
#else
char g_plugin_name[32] = "ncclfi";
__attribute__((constructor)) void choose_plugin_name() {
  std::strncpy(g_plugin_name, ncclfi::net::plugin_name(), sizeof(g_plugin_name) - 1);
}
#endif

// v10 and older get init once per process (as NCCL's own plugin loader does): that call's context serves
// every comm.
void* g_legacy_ctx = nullptr;

// ---- v11 (the internal API's own shape) ----
ncclResult_t init_v11(void** ctx, uint64_t comm_id, ncclNetCommConfig_t* config, ncclDebugLogger_t logger,
                      ncclProfilerCallback_t) {
  return guarded("init", [&] { return shim().init(ctx, comm_id, config, logger); });
}
ncclResult_t devices(int* ndev) {
  return guarded("devices", [&] { return shim().devices(ndev); });
}
ncclResult_t get_properties_v11(int dev, ncclNetProperties_v11_t* props) {
  return guarded("getProperties", [&] {
    const NetStatus st = shim().get_properties(dev, props);
#ifdef NCCLFI_NET_TEST_CUDA_PTRS
    // Test-only inner plugin: claims GPUDirect (its "device" memory is host memory) so the wrap-mode tests
    // can check what the shim passes through.
    props->ptrSupport |= NCCL_PTR_CUDA | NCCL_PTR_DMABUF;
#endif
    return st;
  });
}
ncclResult_t listen_v11(void* ctx, int dev, void* handle, void** listen_comm) {
  return guarded("listen", [&] { return shim().listen(ctx, dev, handle, listen_comm); });
}
ncclResult_t connect_v11(void* ctx, int dev, void* handle, void** send_comm, ncclNetDeviceHandle_t**) {
  return guarded("connect", [&] { return shim().connect(ctx, dev, handle, send_comm); });
}
ncclResult_t accept(void* listen_comm, void** recv_comm, ncclNetDeviceHandle_t**) {
  return guarded("accept", [&] { return shim().accept(listen_comm, recv_comm); });
}
ncclResult_t reg_mr(void* comm, void* data, size_t size, int type, void** mhandle) {
#ifdef NCCLFI_NET_TEST_CUDA_PTRS
  if (type == NCCL_PTR_CUDA) type = NCCL_PTR_HOST;  // its "device" memory is host memory
#endif
  return guarded("regMr", [&] { return shim().reg_mr(comm, data, size, type, mhandle); });
}
ncclResult_t dereg_mr(void* comm, void* mhandle) {
  return guarded("deregMr", [&] { return shim().dereg_mr(comm, mhandle); });
}
ncclResult_t isend_v10(void* send_comm, void* data, size_t size, int tag, void* mhandle, void* phandle,
                       void** request) {
  return guarded("isend",
                 [&] { return shim().isend(send_comm, data, size, tag, mhandle, phandle, request); });
}
ncclResult_t irecv_v10(void* recv_comm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                       void** phandles, void** request) {
  return guarded("irecv",
                 [&] { return shim().irecv(recv_comm, n, data, sizes, tags, mhandles, phandles, request); });
}
// GPUDirect: forwarded to a wrapped plugin that has them; our own transport never advertises device memory,
// so NCCL does not call them then (they answer ncclInternalError if it did).
ncclResult_t reg_mr_dma_buf(void* comm, void* data, size_t size, int type, uint64_t offset, int fd,
                            void** mhandle) {
  return guarded("regMrDmaBuf",
                 [&] { return shim().reg_mr_dma_buf(comm, data, size, type, offset, fd, mhandle); });
}
ncclResult_t iflush(void* recv_comm, int n, void** data, int* sizes, void** mhandles, void** request) {
  return guarded("iflush", [&] { return shim().iflush(recv_comm, n, data, sizes, mhandles, request); });
}
ncclResult_t test(void* request, int* done, int* sizes) {
  return guarded("test", [&] { return shim().test(request, done, sizes); });
}
ncclResult_t close_send(void* send_comm) {
  return guarded("closeSend", [&] { return shim().close_send(send_comm); });
}
ncclResult_t close_recv(void* recv_comm) {
  return guarded("closeRecv", [&] { return shim().close_recv(recv_comm); });
}
ncclResult_t close_listen(void* listen_comm) {
  return guarded("closeListen", [&] { return shim().close_listen(listen_comm); });
}
ncclResult_t finalize_v11(void* ctx) {
  return guarded("finalize", [&] { return shim().finalize(ctx); });
}
ncclResult_t set_net_attr_v11(void*, ncclNetAttr_v11_t*) {
  return ncclSuccess;
}  // a hint we do not use

// ---- v10 ----
ncclResult_t init_v10(ncclDebugLogger_t logger, ncclProfilerCallback_t) {
  return guarded("init", [&] { return shim().init(&g_legacy_ctx, 0, nullptr, logger); });
}
ncclResult_t get_properties_v10(int dev, ncclNetProperties_v10_t* props) {
  return guarded("getProperties", [&] {
    ncclNetProperties_v11_t p11{};
    NetStatus status = shim().get_properties(dev, &p11);
    std::memcpy(props, &p11, sizeof(*props));  // v10 is v11 without the trailing maxMultiRequestSize
    return status;
  });
}
ncclResult_t listen_legacy(int dev, void* handle, void** listen_comm) {
  return guarded("listen", [&] { return shim().listen(g_legacy_ctx, dev, handle, listen_comm); });
}
ncclResult_t connect_v10(int dev, ncclNetCommConfig_t*, void* handle, void** send_comm,
                         ncclNetDeviceHandle_t**) {
  return guarded("connect", [&] { return shim().connect(g_legacy_ctx, dev, handle, send_comm); });
}

// ---- v9 ----
ncclResult_t init_v9(ncclDebugLogger_t logger) {
  return guarded("init", [&] { return shim().init(&g_legacy_ctx, 0, nullptr, logger); });
}
ncclResult_t connect_v9(int dev, void* handle, void** send_comm, ncclNetDeviceHandle_t**) {
  return guarded("connect", [&] { return shim().connect(g_legacy_ctx, dev, handle, send_comm); });
}
ncclResult_t isend_v9(void* send_comm, void* data, size_t size, int tag, void* mhandle, void** request) {
  return isend_v10(send_comm, data, size, tag, mhandle, nullptr, request);
}
ncclResult_t irecv_v9(void* recv_comm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                      void** request) {
  return irecv_v10(recv_comm, n, data, sizes, tags, mhandles, nullptr, request);
}

// ---- v8 ----
ncclResult_t get_properties_v8(int dev, ncclNetProperties_v8_t* props) {
  return guarded("getProperties", [&] {
    ncclNetProperties_v11_t p{};
    NetStatus status = shim().get_properties(dev, &p);
    *props = ncclNetProperties_v8_t{p.name,        p.pciPath,  p.guid,          p.ptrSupport,
                                    p.regIsGlobal, p.speed,    p.port,          p.latency,
                                    p.maxComms,    p.maxRecvs, p.netDeviceType, p.netDeviceVersion};
    return status;
  });
}
ncclResult_t isend_v8(void* send_comm, void* data, int size, int tag, void* mhandle, void** request) {
  if (size < 0) return ncclInvalidArgument;
  return isend_v10(send_comm, data, static_cast<size_t>(size), tag, mhandle, nullptr, request);
}
ncclResult_t irecv_v8(void* recv_comm, int n, void** data, int* sizes, int* tags, void** mhandles,
                      void** request) {
  constexpr int kMaxGroup = 8;
  if (n < 0 || n > kMaxGroup) return ncclInvalidArgument;
  size_t wide[kMaxGroup];
  for (int i = 0; i < n; ++i) wide[i] = sizes[i] < 0 ? 0 : static_cast<size_t>(sizes[i]);
  return irecv_v10(recv_comm, n, data, wide, tags, mhandles, nullptr, request);
}

}  // namespace

extern "C" {

// One entry a line, in the order of each table's fields.
// clang-format off

#if NCCLFI_NET_MAX_VERSION >= 11
__attribute__((visibility("default"))) extern const ncclNet_v11_t ncclNetPlugin_v11 = {
    g_plugin_name,
    init_v11,
    devices,
    get_properties_v11,
    listen_v11,
    connect_v11,
    accept,
    reg_mr,
    reg_mr_dma_buf,
    dereg_mr,
    isend_v10,
    irecv_v10,
    iflush,
    test,
    close_send,
    close_recv,
    close_listen,
    nullptr,
    nullptr,
    nullptr,
    finalize_v11,
    set_net_attr_v11,
};
#endif

#if NCCLFI_NET_MAX_VERSION >= 10
__attribute__((visibility("default"))) extern const ncclNet_v10_t ncclNetPlugin_v10 = {
    g_plugin_name,
    init_v10,
    devices,
    get_properties_v10,
    listen_legacy,
    connect_v10,
    accept,
    reg_mr,
    reg_mr_dma_buf,
    dereg_mr,
    isend_v10,
    irecv_v10,
    iflush,
    test,
    close_send,
    close_recv,
    close_listen,
    nullptr,
    nullptr,
    nullptr,
};
#endif

#if NCCLFI_NET_MAX_VERSION >= 9
__attribute__((visibility("default"))) extern const ncclNet_v9_t ncclNetPlugin_v9 = {
    g_plugin_name,
    init_v9,
    devices,
    get_properties_v10,
    listen_legacy,
    connect_v9,
    accept,
    reg_mr,
    reg_mr_dma_buf,
    dereg_mr,
    isend_v9,
    irecv_v9,
    iflush,
    test,
    close_send,
    close_recv,
    close_listen,
    nullptr,
    nullptr,
    nullptr,
};
#endif

__attribute__((visibility("default"))) extern const ncclNet_v8_t ncclNetPlugin_v8 = {
    g_plugin_name,
    init_v9,
    devices,
    get_properties_v8,
    listen_legacy,
    connect_v9,
    accept,
    reg_mr,
    reg_mr_dma_buf,
    dereg_mr,
    isend_v8,
    irecv_v8,
    iflush,
    test,
    close_send,
    close_recv,
    close_listen,
    nullptr,
    nullptr,
};

// clang-format on

}  // extern "C"
