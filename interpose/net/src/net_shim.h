// NetShim: the internal API every exported ncclNetPlugin_vN table calls. It owns the backend (our TCP
// transport, or an inner plugin in wrap mode) and, when NCCLFI_PLAN arms net faults for this process,
// wraps comms and requests to apply them: points net/connect, net/accept, net/isend, net/irecv,
// net/test. With no plan it forwards every call unchanged (no wrapping, no output). Each fault comes
// with its action resolved by the core (ncclfi/fault_action.h); the shim never reads plan JSON.
//
// What each kind does where it fires (the points come from the kind registry, ncclfi list faults):
//   delay         isend/irecv: the completion is reported ms (+ 0..jitter_ms, the seeded draw every layer
//                 makes: Delay::draw, ncclfi/effects.h) after the transport finished.
//   throttle      isend/irecv: from this request on, the connection is a token bucket at `gbps` (no
//                 burst); a request completes no earlier than its bytes fit through it, counted from its
//                 post (an idle link is not credited).
//   drop          isend/irecv/test: the request is carried but its completion is never reported.
//   corrupt       irecv: exactly `bits` distinct bits of the received bytes flip before the completion is
//                 reported, chosen from the shared corruption seed (corrupt_seed, ncclfi/effects.h); in GPU
//                 memory through the CUDA driver, device_memory.h; refused with "effect": "none: why" when
//                 the driver or a context is missing. The kind fires at net/irecv only: a send is never
//                 touched.
//   error         isend/irecv/test: the call returns `code` (default ncclSystemError).
//   connect_fail  connect/accept: the call returns `code` (default ncclSystemError) and no comm.
//   stall         isend/irecv: the connection reports no completion for `ms`, then resumes.
//   nic_down      isend/irecv: from this request on, no request of the process completes; each fails
//                 with `code` (default ncclRemoteError) once the IB retry budget has passed since its
//                 post, after the lines NCCL's IB transport writes for IBV_WC_RETRY_EXC_ERR in the NCCL
//                 release in use (ib_completion_lines.h). In the IB persona (ib_persona.h) the process's
//                 connections are cut as well, so its peers see the NIC go from their side: their
//                 requests on those connections fail the same way, once their own retry budget passed.
//                 Connections to ranks on the same node (NCCLFI_NODE_RANKS) stand for NVLink or PCIe:
//                 nic_down leaves them alone, and a lost one (IB persona) never completes, as a P2P
//                 transfer to a vanished peer waits until a watchdog ends it.
// Targets: rank (Params), peer (irecv: the tag, i.e. the remote rank; isend: the rank the listener put
// in the handle, known with our own transport only), direction, min_bytes (posted bytes; completed
// bytes at net/test). Every firing is an `inject` event with request id, bytes and peer.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "ncclfi/injector.h"
#include "net_backend.h"
#include "net_faults.h"

namespace ncclfi::net {

struct ShimOptions {
  bool allow_wrap = true;    // honour NCCLFI_NET_INNER
  bool allow_faults = true;  // honour NCCLFI_PLAN
};

class NetShim {
 public:
  // The process-wide shim, created on first use from Params::get(). Creation failures (bad inner plugin)
  // are kept and returned by every init().
  static NetShim& instance(const ShimOptions& options);

  NetStatus init(void** ctx, uint64_t comm_id, ncclNetCommConfig_t* config, ncclDebugLogger_t logger);
  NetStatus finalize(void* ctx);
  NetStatus devices(int* ndev);
  NetStatus get_properties(int dev, ncclNetProperties_v11_t* props);
  NetStatus listen(void* ctx, int dev, void* handle, void** listen_comm);
  NetStatus connect(void* ctx, int dev, void* handle, void** send_comm);
  NetStatus accept(void* listen_comm, void** recv_comm);
  NetStatus reg_mr(void* comm, void* data, size_t size, int type, void** mhandle);
  NetStatus dereg_mr(void* comm, void* mhandle);
  // Wrap mode: forwarded to the inner plugin when it has them (ncclInternalError otherwise).
  NetStatus reg_mr_dma_buf(void* comm, void* data, size_t size, int type, uint64_t offset, int fd,
                           void** mhandle);
  NetStatus iflush(void* recv_comm, int n, void** data, int* sizes, void** mhandles, void** request);
  NetStatus isend(void* send_comm, void* data, size_t size, int tag, void* mhandle, void* phandle,
                  void** request);
  NetStatus irecv(void* recv_comm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                  void** phandles, void** request);
  NetStatus test(void* request, int* done, int* sizes);
  NetStatus close_send(void* send_comm);
  NetStatus close_recv(void* recv_comm);
  NetStatus close_listen(void* listen_comm);

 private:
  struct Comm;
  struct Request;
  explicit NetShim(const ShimOptions& options);
  bool faults_on() const { return injector_ != nullptr; }
  // Comms and requests are wrapped when faults are armed, and in the IB persona (a lost connection then
  // fails as an IB queue pair does, whether or not a fault fired in this process).
  bool wraps() const { return injector_ != nullptr || ib_persona_; }
  CallSite site(const char* op, int peer, Direction direction, uint64_t bytes) const;
  // Applies a fault that fired at a connection point (connect/accept). Returns the status the
  // call must return (kNetOk: go on).
  NetStatus connection_fault(const char* point, const ArmedFault* fault, const CallSite& site);
  // Applies a fault that fired on a data request (at post or at completion).
  NetStatus request_fault(const char* point, const ArmedFault* fault, const CallSite& site, Request* req);
  void finish_completion(Request* req, int64_t now);
  // nic_down: NCCL_IB_TIMEOUT x NCCL_IB_RETRY_CNT of this rank (ib_retry_budget.h), and the failure
  // it ends in.
  static int64_t nic_retry_budget_ns();
  // Writes NCCL's completion-error lines for `req` (IBV_WC_RETRY_EXC_ERR) and returns its failure.
  NetStatus fail_retries_exhausted(Request* req) const;
  // IB persona: a request whose connection was lost waits out the retry budget, then fails as NCCL's IB
  // transport fails it.
  void hold_until_retries_exhausted(Request* req);
  // Cuts every comm that leaves the node (the IB persona's dead NIC).
  void sever_all_comms();
  // Whether `peer` runs on this rank's node (NCCLFI_NODE_RANKS).
  bool on_this_node(int peer) const;
  static constexpr int64_t kNeverNs = INT64_MAX / 2;  // a request that never completes
  Comm* track(Comm* comm);
  void untrack(Comm* comm);
  std::atomic<int64_t> nic_down_since_ns_{0};
  std::atomic<NetStatus> nic_down_status_{kNetOk};
  bool ib_persona_ = false;
  std::atomic<bool> announced_{false};  // the IB persona's init line is written (once per process)
  std::mutex comms_mu_;
  std::set<Comm*> comms_;  // established comms (wrapped), for sever_all_comms

  std::unique_ptr<NetBackend> backend_;
  std::string setup_error_;
  Injector* injector_ = nullptr;  // null: pass-through
  int rank_ = -1;
  std::string hca_;              // the HCA this rank's lines name (hca_name_for_rank)
  std::vector<int> node_ranks_;  // the ranks on this rank's node, itself included (empty: not known)
  std::atomic<uint64_t> next_request_id_{1};
  // With faults armed, NCCL holds our own registration handle, which remembers whether the memory is the
  // host's or a device's: an inner plugin's handle cannot tell (it may be NULL, as our TCP transport's
  // and NCCL's socket plugin's are, or shared between registrations).
  struct Mr {
    void* inner = nullptr;
    bool device = false;
  };
  static void* inner_mr(void* mhandle) { return mhandle ? static_cast<Mr*>(mhandle)->inner : nullptr; }
  static bool is_device_mr(void* mhandle) { return mhandle && static_cast<Mr*>(mhandle)->device; }
};

}  // namespace ncclfi::net
