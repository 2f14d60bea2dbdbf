#include "inner_backend.h"

#include <dlfcn.h>

#include <string>

namespace ncclfi::net {
namespace {

class InnerBackend final : public NetBackend {
 public:
  explicit InnerBackend(std::unique_ptr<LoadedNetPlugin> plugin)
      : plugin_(std::move(plugin)),
        kind_("wrap:" + std::string(plugin_->name()) + " v" + std::to_string(plugin_->version())) {}
  const char* kind() const override { return kind_.c_str(); }
  NetStatus init(void** ctx, uint64_t comm_id, ncclNetCommConfig_t* config,
                 ncclDebugLogger_t logger) override {
    return nccl_status(plugin_->init(ctx, comm_id, config, logger));
  }
  NetStatus finalize(void* ctx) override { return nccl_status(plugin_->finalize(ctx)); }
  NetStatus devices(int* ndev) override { return nccl_status(plugin_->devices(ndev)); }
  NetStatus get_properties(int dev, ncclNetProperties_v11_t* props) override {
    return nccl_status(plugin_->get_properties(dev, props));
  }
  NetStatus listen(void* ctx, int dev, void* handle, void** listen_comm) override {
    return nccl_status(plugin_->listen(ctx, dev, handle, listen_comm));
  }
  NetStatus connect(void* ctx, int dev, void* handle, void** send_comm) override {
    return nccl_status(plugin_->connect(ctx, dev, handle, send_comm));
  }
  NetStatus accept(void* listen_comm, void** recv_comm) override {
    return nccl_status(plugin_->accept(listen_comm, recv_comm));
  }
  NetStatus reg_mr(void* comm, void* data, size_t size, int type, void** mhandle) override {
    return nccl_status(plugin_->reg_mr(comm, data, size, type, mhandle));
  }
  NetStatus dereg_mr(void* comm, void* mhandle) override {
    return nccl_status(plugin_->dereg_mr(comm, mhandle));
  }
  NetStatus isend(void* send_comm, void* data, size_t size, int tag, void* mhandle, void* phandle,
                  void** request) override {
    return nccl_status(plugin_->isend(send_comm, data, size, tag, mhandle, phandle, request));
  }
  NetStatus irecv(void* recv_comm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                  void** phandles, void** request) override {
    return nccl_status(plugin_->irecv(recv_comm, n, data, sizes, tags, mhandles, phandles, request));
  }
  NetStatus test(void* request, int* done, int* sizes) override {
    return nccl_status(plugin_->test(request, done, sizes));
  }
  bool has_reg_mr_dma_buf() const override { return plugin_->has_reg_mr_dma_buf(); }
  NetStatus reg_mr_dma_buf(void* comm, void* data, size_t size, int type, uint64_t offset, int fd,
                           void** mhandle) override {
    return nccl_status(plugin_->reg_mr_dma_buf(comm, data, size, type, offset, fd, mhandle));
  }
  bool has_iflush() const override { return plugin_->has_iflush(); }
  NetStatus iflush(void* recv_comm, int n, void** data, int* sizes, void** mhandles,
                   void** request) override {
    return nccl_status(plugin_->iflush(recv_comm, n, data, sizes, mhandles, request));
  }
  NetStatus close_send(void* c) override { return nccl_status(plugin_->close_send(c)); }
  NetStatus close_recv(void* c) override { return nccl_status(plugin_->close_recv(c)); }
  NetStatus close_listen(void* c) override { return nccl_status(plugin_->close_listen(c)); }

 private:
  std::unique_ptr<LoadedNetPlugin> plugin_;
  std::string kind_;
};

// The dlopen handle of the library this code is linked into.
void* own_library_handle() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&own_library_handle), &info) == 0 || !info.dli_fname) return nullptr;
  void* handle = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
  if (handle) dlclose(handle);  // drop the reference NOLOAD took; the library stays loaded
  return handle;
}

}  // namespace

std::unique_ptr<NetBackend> make_inner_backend(const std::string& entry, std::string* error) {
  std::unique_ptr<LoadedNetPlugin> plugin = LoadedNetPlugin::open(entry, error);
  if (!plugin) return nullptr;
  void* self = own_library_handle();
  if (self && plugin->dl_handle() == self) {
    *error = "NCCLFI_NET_INNER='" + entry + "' is the ncclfi shim itself; name another plugin";
    return nullptr;
  }
  return std::make_unique<InnerBackend>(std::move(plugin));
}

}  // namespace ncclfi::net
