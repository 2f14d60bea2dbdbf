// Loads an NCCL net plugin the way NCCL 2.28 does (dlopen the entry, else libnccl-net-<entry>.so; then
// the newest ncclNetPlugin_v11..v8 symbol) and presents it through one v11-shaped interface, adapting
// the older versions: init once per process for v8-v10, int sizes for v8, the comm config for v10.
// Used by the shim's wrap mode (NCCLFI_NET_INNER), ncclfi-cpu-ring, the plugin tests and the bench.
// Thread safety: the calls are as thread-safe as the loaded plugin; open() and init() are serialised.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "ncclfi_net/net_types.h"

namespace ncclfi::net {

class LoadedNetPlugin {
 public:
  // Opens `entry` (a path or a name). On failure returns nullptr and sets *error.
  static std::unique_ptr<LoadedNetPlugin> open(const std::string& entry, std::string* error);
  ~LoadedNetPlugin();
  LoadedNetPlugin(const LoadedNetPlugin&) = delete;
  LoadedNetPlugin& operator=(const LoadedNetPlugin&) = delete;

  int version() const { return version_; }
  const char* name() const;
  const std::string& path() const { return path_; }
  // The dlopen handle, for identity checks (same library loaded twice).
  void* dl_handle() const { return dl_; }

  // v11: per-communicator init. v8-v10: the plugin's init runs once per process; later calls only
  // allocate a context that carries `config` (v10 passes it to connect).
  ncclResult_t init(void** ctx, uint64_t comm_id, ncclNetCommConfig_t* config, ncclDebugLogger_t logger,
                    ncclProfilerCallback_t prof = nullptr);
  ncclResult_t finalize(void* ctx);
  ncclResult_t devices(int* ndev);
  // Fills every v11 field; fields an older version lacks get NCCL's own defaults for that version.
  ncclResult_t get_properties(int dev, ncclNetProperties_v11_t* props);
  ncclResult_t listen(void* ctx, int dev, void* handle, void** listen_comm);
  ncclResult_t connect(void* ctx, int dev, void* handle, void** send_comm);
  ncclResult_t accept(void* listen_comm, void** recv_comm);
  ncclResult_t reg_mr(void* comm, void* data, size_t size, int type, void** mhandle);
  ncclResult_t dereg_mr(void* comm, void* mhandle);
  // The GPUDirect calls, when the plugin has them (null entries in its table: it has not).
  bool has_reg_mr_dma_buf() const;
  ncclResult_t reg_mr_dma_buf(void* comm, void* data, size_t size, int type, uint64_t offset, int fd,
                              void** mhandle);
  bool has_iflush() const;
  ncclResult_t iflush(void* recv_comm, int n, void** data, int* sizes, void** mhandles, void** request);
  ncclResult_t isend(void* send_comm, void* data, size_t size, int tag, void* mhandle, void* phandle,
                     void** request);
  ncclResult_t irecv(void* recv_comm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                     void** phandles, void** request);
  ncclResult_t test(void* request, int* done, int* sizes);
  ncclResult_t close_send(void* send_comm);
  ncclResult_t close_recv(void* recv_comm);
  ncclResult_t close_listen(void* listen_comm);

 private:
  LoadedNetPlugin() = default;
  void* dl_ = nullptr;
  std::string path_;
  int version_ = 0;
  const ncclNet_v8_t* v8_ = nullptr;
  const ncclNet_v9_t* v9_ = nullptr;
  const ncclNet_v10_t* v10_ = nullptr;
  const ncclNet_v11_t* v11_ = nullptr;
  std::mutex init_mu_;
  bool legacy_init_done_ = false;
  ncclResult_t legacy_init_result_ = ncclSuccess;
};

// The candidate file names NCCL tries for one NCCL_NET_PLUGIN entry, in order.
std::string nccl_plugin_fallback_name(const std::string& entry);

}  // namespace ncclfi::net
