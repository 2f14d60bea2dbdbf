#include "ncclfi_net/plugin_loader.h"

#include <dlfcn.h>
#include <strings.h>

#include <climits>
#include <cstring>

namespace ncclfi::net {
namespace {

// For v8-v10 the context is ours: it remembers the communicator's config for v10's connect().
struct LegacyContext {
  ncclNetCommConfig_t config{NCCL_NET_TRAFFIC_CLASS_UNDEF};
};

LegacyContext* legacy(void* ctx) {
  return static_cast<LegacyContext*>(ctx);
}

}  // namespace

std::string nccl_plugin_fallback_name(const std::string& entry) {
  const bool has_slash = entry.find('/') != std::string::npos;
  const bool is_lib_so =
      entry.rfind("lib", 0) == 0 && entry.size() > 3 && entry.compare(entry.size() - 3, 3, ".so") == 0;
  if (has_slash || is_lib_so) return "";
  return "libnccl-net-" + entry + ".so";
}

std::unique_ptr<LoadedNetPlugin> LoadedNetPlugin::open(const std::string& entry, std::string* error) {
  std::unique_ptr<LoadedNetPlugin> plugin(new LoadedNetPlugin());
  void* dl = dlopen(entry.c_str(), RTLD_NOW | RTLD_LOCAL);
  std::string path = entry;
  std::string first_error = dl ? "" : dlerror();
  if (!dl) {
    const std::string fallback = nccl_plugin_fallback_name(entry);
    if (!fallback.empty()) {
      dl = dlopen(fallback.c_str(), RTLD_NOW | RTLD_LOCAL);
      path = fallback;
      if (!dl) first_error += "; " + std::string(dlerror());
    }
  }
  if (!dl) {
    if (error) *error = "cannot load net plugin '" + entry + "': " + first_error;
    return nullptr;
  }
  plugin->dl_ = dl;
  plugin->path_ = path;
  if ((plugin->v11_ = static_cast<const ncclNet_v11_t*>(dlsym(dl, "ncclNetPlugin_v11")))) {
    plugin->version_ = 11;
  } else if ((plugin->v10_ = static_cast<const ncclNet_v10_t*>(dlsym(dl, "ncclNetPlugin_v10")))) {
    plugin->version_ = 10;
  } else if ((plugin->v9_ = static_cast<const ncclNet_v9_t*>(dlsym(dl, "ncclNetPlugin_v9")))) {
    plugin->version_ = 9;
  } else if ((plugin->v8_ = static_cast<const ncclNet_v8_t*>(dlsym(dl, "ncclNetPlugin_v8")))) {
    plugin->version_ = 8;
  } else {
    if (error) *error = "net plugin '" + path + "' exports no ncclNetPlugin_v11..v8 symbol";
    return nullptr;  // the destructor closes dl
  }
  return plugin;
}

LoadedNetPlugin::~LoadedNetPlugin() {
  if (dl_) dlclose(dl_);
}

const char* LoadedNetPlugin::name() const {
  switch (version_) {
    case 11:
      return v11_->name;
    case 10:
      return v10_->name;
    case 9:
      return v9_->name;
    case 8:
      return v8_->name;
    default:
      return "";
  }
}

ncclResult_t LoadedNetPlugin::init(void** ctx, uint64_t comm_id, ncclNetCommConfig_t* config,
                                   ncclDebugLogger_t logger, ncclProfilerCallback_t prof) {
  *ctx = nullptr;
  if (version_ == 11) {
    ncclNetCommConfig_t fallback{NCCL_NET_TRAFFIC_CLASS_UNDEF};
    return v11_->init(ctx, comm_id, config ? config : &fallback, logger, prof);
  }
  {
    // NCCL itself calls init of a v10-or-older plugin once per process.
    std::lock_guard<std::mutex> lock(init_mu_);
    if (!legacy_init_done_) {
      legacy_init_done_ = true;
      if (version_ == 10) legacy_init_result_ = v10_->init(logger, prof);
      if (version_ == 9) legacy_init_result_ = v9_->init(logger);
      if (version_ == 8) legacy_init_result_ = v8_->init(logger);
    }
    if (legacy_init_result_ != ncclSuccess) return legacy_init_result_;
  }
  auto* lctx = new LegacyContext();
  if (config) lctx->config = *config;
  *ctx = lctx;
  return ncclSuccess;
}

ncclResult_t LoadedNetPlugin::finalize(void* ctx) {
  if (version_ == 11) return v11_->finalize ? v11_->finalize(ctx) : ncclSuccess;
  delete legacy(ctx);
  return ncclSuccess;
}

ncclResult_t LoadedNetPlugin::devices(int* ndev) {
  switch (version_) {
    case 11:
      return v11_->devices(ndev);
    case 10:
      return v10_->devices(ndev);
    case 9:
      return v9_->devices(ndev);
    default:
      return v8_->devices(ndev);
  }
}

namespace {
template <typename From>
void copy_v9_fields(const From& from, ncclNetProperties_v11_t* to) {
  to->name = from.name;
  to->pciPath = from.pciPath;
  to->guid = from.guid;
  to->ptrSupport = from.ptrSupport;
  to->regIsGlobal = from.regIsGlobal;
  to->forceFlush = from.forceFlush;
  to->speed = from.speed;
  to->port = from.port;
  to->latency = from.latency;
  to->maxComms = from.maxComms;
  to->maxRecvs = from.maxRecvs;
  to->netDeviceType = from.netDeviceType;
  to->netDeviceVersion = from.netDeviceVersion;
  to->vProps = from.vProps;
  to->maxP2pBytes = from.maxP2pBytes;
  to->maxCollBytes = from.maxCollBytes;
  to->maxMultiRequestSize = 1;
}
}  // namespace

ncclResult_t LoadedNetPlugin::get_properties(int dev, ncclNetProperties_v11_t* props) {
  std::memset(props, 0, sizeof(*props));
  if (version_ == 11) return v11_->getProperties(dev, props);
  if (version_ == 10 || version_ == 9) {
    ncclNetProperties_v9_t p9{};
    ncclResult_t r = version_ == 10 ? v10_->getProperties(dev, &p9) : v9_->getProperties(dev, &p9);
    if (r == ncclSuccess) copy_v9_fields(p9, props);
    return r;
  }
  ncclNetProperties_v8_t p8{};
  ncclResult_t r = v8_->getProperties(dev, &p8);
  if (r != ncclSuccess) return r;
  ncclNetProperties_v9_t p9{};
  p9.name = p8.name;
  p9.pciPath = p8.pciPath;
  p9.guid = p8.guid;
  p9.ptrSupport = p8.ptrSupport;
  p9.regIsGlobal = p8.regIsGlobal;
  p9.speed = p8.speed;
  p9.port = p8.port;
  p9.latency = p8.latency;
  p9.maxComms = p8.maxComms;
  p9.maxRecvs = p8.maxRecvs;
  p9.netDeviceType = p8.netDeviceType;
  p9.netDeviceVersion = p8.netDeviceVersion;
  p9.vProps.ndevs = 1;
  p9.vProps.devs[0] = dev;
  p9.maxP2pBytes = size_t{1} << 30;  // MAX_NET_SIZE: what NCCL's v8 shim reports
  p9.maxCollBytes = size_t{1} << 30;
  copy_v9_fields(p9, props);
  return ncclSuccess;
}

ncclResult_t LoadedNetPlugin::listen(void* ctx, int dev, void* handle, void** listen_comm) {
  switch (version_) {
    case 11:
      return v11_->listen(ctx, dev, handle, listen_comm);
    case 10:
      return v10_->listen(dev, handle, listen_comm);
    case 9:
      return v9_->listen(dev, handle, listen_comm);
    default:
      return v8_->listen(dev, handle, listen_comm);
  }
}

ncclResult_t LoadedNetPlugin::connect(void* ctx, int dev, void* handle, void** send_comm) {
  ncclNetDeviceHandle_t* dev_comm = nullptr;
  switch (version_) {
    case 11:
      return v11_->connect(ctx, dev, handle, send_comm, &dev_comm);
    case 10: {
      ncclNetCommConfig_t fallback{NCCL_NET_TRAFFIC_CLASS_UNDEF};
      return v10_->connect(dev, ctx ? &legacy(ctx)->config : &fallback, handle, send_comm, &dev_comm);
    }
    case 9:
      return v9_->connect(dev, handle, send_comm, &dev_comm);
    default:
      return v8_->connect(dev, handle, send_comm, &dev_comm);
  }
}

ncclResult_t LoadedNetPlugin::accept(void* listen_comm, void** recv_comm) {
  ncclNetDeviceHandle_t* dev_comm = nullptr;
  switch (version_) {
    case 11:
      return v11_->accept(listen_comm, recv_comm, &dev_comm);
    case 10:
      return v10_->accept(listen_comm, recv_comm, &dev_comm);
    case 9:
      return v9_->accept(listen_comm, recv_comm, &dev_comm);
    default:
      return v8_->accept(listen_comm, recv_comm, &dev_comm);
  }
}

ncclResult_t LoadedNetPlugin::reg_mr(void* comm, void* data, size_t size, int type, void** mhandle) {
  switch (version_) {
    case 11:
      return v11_->regMr(comm, data, size, type, mhandle);
    case 10:
      return v10_->regMr(comm, data, size, type, mhandle);
    case 9:
      return v9_->regMr(comm, data, size, type, mhandle);
    default:
      return v8_->regMr(comm, data, size, type, mhandle);
  }
}

ncclResult_t LoadedNetPlugin::dereg_mr(void* comm, void* mhandle) {
  switch (version_) {
    case 11:
      return v11_->deregMr(comm, mhandle);
    case 10:
      return v10_->deregMr(comm, mhandle);
    case 9:
      return v9_->deregMr(comm, mhandle);
    default:
      return v8_->deregMr(comm, mhandle);
  }
}

ncclResult_t LoadedNetPlugin::isend(void* send_comm, void* data, size_t size, int tag, void* mhandle,
                                    void* phandle, void** request) {
  switch (version_) {
    case 11:
      return v11_->isend(send_comm, data, size, tag, mhandle, phandle, request);
    case 10:
      return v10_->isend(send_comm, data, size, tag, mhandle, phandle, request);
    case 9:
      return v9_->isend(send_comm, data, size, tag, mhandle, request);
    default:
      if (size > static_cast<size_t>(INT_MAX)) return ncclInvalidArgument;
      return v8_->isend(send_comm, data, static_cast<int>(size), tag, mhandle, request);
  }
}

ncclResult_t LoadedNetPlugin::irecv(void* recv_comm, int n, void** data, size_t* sizes, int* tags,
                                    void** mhandles, void** phandles, void** request) {
  switch (version_) {
    case 11:
      return v11_->irecv(recv_comm, n, data, sizes, tags, mhandles, phandles, request);
    case 10:
      return v10_->irecv(recv_comm, n, data, sizes, tags, mhandles, phandles, request);
    case 9:
      return v9_->irecv(recv_comm, n, data, sizes, tags, mhandles, request);
    default: {
      constexpr int kMaxGroup = 8;
      if (n > kMaxGroup || n < 0) return ncclInvalidArgument;
      int int_sizes[kMaxGroup];
      for (int i = 0; i < n; ++i) {
        // v8 cannot express receives past 2 GiB; NCCL's own v8 shim caps them at 1 GiB.
        const size_t capped = sizes[i] > (size_t{1} << 30) ? (size_t{1} << 30) : sizes[i];
        int_sizes[i] = static_cast<int>(capped);
      }
      return v8_->irecv(recv_comm, n, data, int_sizes, tags, mhandles, request);
    }
  }
}

// Every version from v8 on has regMrDmaBuf and iflush at the same place in its table.
#define NCCLFI_NET_TABLE_CALL(field, ...) \
  switch (version_) {                     \
    case 11:                              \
      return v11_->field(__VA_ARGS__);    \
    case 10:                              \
      return v10_->field(__VA_ARGS__);    \
    case 9:                               \
      return v9_->field(__VA_ARGS__);     \
    default:                              \
      return v8_->field(__VA_ARGS__);     \
  }

bool LoadedNetPlugin::has_reg_mr_dma_buf() const {
  switch (version_) {
    case 11:
      return v11_->regMrDmaBuf != nullptr;
    case 10:
      return v10_->regMrDmaBuf != nullptr;
    case 9:
      return v9_->regMrDmaBuf != nullptr;
    default:
      return v8_->regMrDmaBuf != nullptr;
  }
}

ncclResult_t LoadedNetPlugin::reg_mr_dma_buf(void* comm, void* data, size_t size, int type, uint64_t offset,
                                             int fd, void** mhandle) {
  NCCLFI_NET_TABLE_CALL(regMrDmaBuf, comm, data, size, type, offset, fd, mhandle)
}

bool LoadedNetPlugin::has_iflush() const {
  switch (version_) {
    case 11:
      return v11_->iflush != nullptr;
    case 10:
      return v10_->iflush != nullptr;
    case 9:
      return v9_->iflush != nullptr;
    default:
      return v8_->iflush != nullptr;
  }
}

ncclResult_t LoadedNetPlugin::iflush(void* recv_comm, int n, void** data, int* sizes, void** mhandles,
                                     void** request){
    NCCLFI_NET_TABLE_CALL(iflush, recv_comm, n, data, sizes, mhandles, request)}
#undef NCCLFI_NET_TABLE_CALL

ncclResult_t LoadedNetPlugin::test(void* request, int* done, int* sizes) {
  switch (version_) {
    case 11:
      return v11_->test(request, done, sizes);
    case 10:
      return v10_->test(request, done, sizes);
    case 9:
      return v9_->test(request, done, sizes);
    default:
      return v8_->test(request, done, sizes);
  }
}

ncclResult_t LoadedNetPlugin::close_send(void* send_comm) {
  switch (version_) {
    case 11:
      return v11_->closeSend(send_comm);
    case 10:
      return v10_->closeSend(send_comm);
    case 9:
      return v9_->closeSend(send_comm);
    default:
      return v8_->closeSend(send_comm);
  }
}

ncclResult_t LoadedNetPlugin::close_recv(void* recv_comm) {
  switch (version_) {
    case 11:
      return v11_->closeRecv(recv_comm);
    case 10:
      return v10_->closeRecv(recv_comm);
    case 9:
      return v9_->closeRecv(recv_comm);
    default:
      return v8_->closeRecv(recv_comm);
  }
}

ncclResult_t LoadedNetPlugin::close_listen(void* listen_comm) {
  switch (version_) {
    case 11:
      return v11_->closeListen(listen_comm);
    case 10:
      return v10_->closeListen(listen_comm);
    case 9:
      return v9_->closeListen(listen_comm);
    default:
      return v8_->closeListen(listen_comm);
  }
}

}  // namespace ncclfi::net
