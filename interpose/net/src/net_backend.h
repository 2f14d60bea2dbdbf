// The one internal API behind every exported ncclNetPlugin_vN table: a version-neutral, v11-shaped
// backend (our TCP transport, or an inner plugin in wrap mode), with the fault layer on top of it.
// Internal calls return a NetStatus; to_nccl_result() is the only place it becomes an ncclResult_t.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "ncclfi_net/net_types.h"

namespace ncclfi::net {

// 0 success; a negative errno from the transport; or an explicit NCCL code (nccl_status()), used for
// codes an inner plugin returned and for the `error` fault's asked code.
using NetStatus = int;
inline constexpr NetStatus kNetOk = 0;
inline constexpr int kNcclStatusBase = 1000;
constexpr NetStatus nccl_status(ncclResult_t r) {
  return r == ncclSuccess ? kNetOk : kNcclStatusBase + static_cast<int>(r);
}
// The single translation to NCCL's codes: connection loss becomes ncclRemoteError, bad arguments
// ncclInvalidArgument, truncation ncclInvalidUsage, the rest ncclSystemError.
ncclResult_t to_nccl_result(NetStatus status);
// A short name for logs: "ECONNRESET", "ncclRemoteError", ...
const char* net_status_name(NetStatus status);

class NetBackend {
 public:
  virtual ~NetBackend() = default;
  virtual const char* kind() const = 0;  // "tcp" or "wrap:<inner name>"
  virtual NetStatus init(void** ctx, uint64_t comm_id, ncclNetCommConfig_t* config,
                         ncclDebugLogger_t logger) = 0;
  virtual NetStatus finalize(void* ctx) = 0;
  virtual NetStatus devices(int* ndev) = 0;
  virtual NetStatus get_properties(int dev, ncclNetProperties_v11_t* props) = 0;
  virtual NetStatus listen(void* ctx, int dev, void* handle, void** listen_comm) = 0;
  // Non-blocking: kNetOk with *send_comm == nullptr means "call again with the same handle".
  virtual NetStatus connect(void* ctx, int dev, void* handle, void** send_comm) = 0;
  virtual NetStatus accept(void* listen_comm, void** recv_comm) = 0;
  virtual NetStatus reg_mr(void* comm, void* data, size_t size, int type, void** mhandle) = 0;
  virtual NetStatus dereg_mr(void* comm, void* mhandle) = 0;
  // *request == nullptr on kNetOk means "could not post now".
  virtual NetStatus isend(void* send_comm, void* data, size_t size, int tag, void* mhandle, void* phandle,
                          void** request) = 0;
  virtual NetStatus irecv(void* recv_comm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                          void** phandles, void** request) = 0;
  virtual NetStatus test(void* request, int* done, int* sizes) = 0;
  virtual NetStatus close_send(void* send_comm) = 0;
  virtual NetStatus close_recv(void* recv_comm) = 0;
  virtual NetStatus close_listen(void* listen_comm) = 0;
  // The process rank at the other end of an established comm, or -1 when the backend cannot tell.
  virtual int remote_rank(void* /*comm*/) const { return -1; }
  // The other end's socket address as NCCL writes it ("10.0.0.2<48123>"), or "" when the backend cannot
  // tell (an inner plugin's comm is opaque).
  virtual std::string peer_address(void* /*comm*/) const { return ""; }
  // After init: the interface and numeric address this process's connections start from ("lo",
  // "127.0.0.2"), or empty names when the backend cannot tell.
  virtual std::pair<std::string, std::string> own_interface() const { return {}; }
  // Cuts an established comm as a dead link would, so the other end sees it go (nic_down in the IB
  // persona). A backend that cannot leaves it alone.
  virtual void sever(void* /*comm*/) {}
  // GPUDirect, in wrap mode only (our TCP transport moves host memory): DMA-BUF registration and the flush
  // of received device memory, forwarded when the inner plugin has them.
  virtual bool has_reg_mr_dma_buf() const { return false; }
  virtual NetStatus reg_mr_dma_buf(void* /*comm*/, void* /*data*/, size_t /*size*/, int /*type*/,
                                   uint64_t /*offset*/, int /*fd*/, void** /*mhandle*/) {
    return nccl_status(ncclInternalError);
  }
  virtual bool has_iflush() const { return false; }
  virtual NetStatus iflush(void* /*recv_comm*/, int /*n*/, void** /*data*/, int* /*sizes*/,
                           void** /*mhandles*/, void** /*request*/) {
    return nccl_status(ncclInternalError);
  }
};

}  // namespace ncclfi::net
