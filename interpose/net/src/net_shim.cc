#include "net_shim.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <thread>

#include "device_memory.h"
#include "ib_persona.h"
#include "inner_backend.h"
#include "ncclfi/effects.h"
#include "ncclfi/fault_points.h"
#include "ncclfi/ib_retry_budget.h"
#include "net_log.h"
#include "tcp_transport.h"

namespace ncclfi::net {
namespace {

FaultPoint g_connect_point{points::kNetConnect};
FaultPoint g_accept_point{points::kNetAccept};
FaultPoint g_isend_point{points::kNetIsend};
FaultPoint g_irecv_point{points::kNetIrecv};
FaultPoint g_test_point{points::kNetTest};
FaultPoint* const kPoints[] = {&g_connect_point, &g_accept_point, &g_isend_point, &g_irecv_point,
                               &g_test_point};

// NCCL groups at most 8 receives (NCCL_NET_IB_MAX_RECVS); wrap mode advertises maxRecvs = 1.
constexpr int kMaxGroupedRecvs = 8;
using InnerMrs = std::array<void*, kMaxGroupedRecvs>;

// An action the kind registry never lets fire at this point: said loudly in the log and the event.
void not_carried_out(const Fault& fault, const char* point, nlohmann::json& extra) {
  NCCLFI_NET_FAULT_WARN("fault %s: %s has no effect at %s", fault.id.c_str(), fault.kind.c_str(), point);
  mark_no_effect(extra, no_effect::cannot_act_at(fault.kind, point));
}

// CPUs this process may run on (its affinity mask), or the online count when that cannot be read.
int usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return CPU_COUNT(&set);
  return static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
}

TcpConfig tcp_config_from(const Params& params) {
  TcpConfig config;
  config.caller_progress = caller_progress_for(params.net_progress, usable_cpus());
  config.nsocks =
      params.net_nsocks < 0 ? default_nsocks(config.caller_progress) : std::clamp(params.net_nsocks, 0, 64);
  config.nthreads = std::clamp(params.net_nthreads, 1, 16);
  config.inline_bytes = static_cast<size_t>(std::clamp(params.net_inline_bytes, 0, 65536));
  config.min_chunk = std::max<size_t>(params.net_min_chunk, 4096);
  config.speed_mbps = params.net_speed_mbps > 0 ? params.net_speed_mbps : 100000;
  config.rank = params.rank;
  config.loopback_per_rank = ib_persona();
  config.hello_timeout_ms = params.net_hello_timeout_ms;
  if (const char* ifname = std::getenv("NCCL_SOCKET_IFNAME")) config.ifname = ifname;
  return config;
}

}  // namespace

struct NetShim::Comm {
  void* inner = nullptr;
  bool is_send = false;
  int peer = -1;
  TokenBucket bucket;
  std::atomic<const ArmedFault*> throttled_by{
      nullptr};  // the fault whose throttle holds (until its window closes)
  std::atomic<int64_t> stall_until_ns{0};
  Request* deferred = nullptr;  // a request whose faults were decided but the backend asked to retry
  std::string peer_address;     // "10.0.0.2<48123>" (IB persona lines), "" when the backend cannot tell
  std::atomic<int64_t> lost_at_ns{0};  // IB persona: when a request first saw the connection gone
  // The peer runs on this rank's node (NCCLFI_NODE_RANKS): on a cluster the link is NVLink or PCIe, not
  // the NIC. nic_down spares it, and losing it is a hang (a P2P transfer has no retry budget).
  bool inside_node = false;
};

struct NetShim::Request {
  void* inner = nullptr;
  Comm* comm = nullptr;
  uint64_t id = 0;
  bool is_send = false;
  char* data = nullptr;
  size_t bytes = 0;
  int peer = -1;
  bool device_memory = false;
  bool flush = false;  // an iflush request: forwarded, never faulted
  bool dropped = false;
  int64_t hold_ns = 0;
  const ArmedFault* corrupt = nullptr;  // the CorruptBits fault that hit this receive
  uint64_t corrupt_bits = 0;
  uint64_t corrupt_seed = 0;
  int64_t post_ns = 0;
  bool inner_done = false;
  int size = 0;
  int64_t release_ns = 0;
  int64_t fail_at_ns = 0;  // nic_down, a lost connection: the retries are spent then, and the request fails
  NetStatus fail_status = kNetOk;  // what it fails with (kNetOk: nic_down's code)
  bool failure_logged = false;     // its completion error was written (once, as a CQE is polled once)
};

NetShim& NetShim::instance(const ShimOptions& options) {
  static NetShim* shim = new NetShim(options);  // never destroyed: NCCL may call us during exit
  return *shim;
}

NetShim::NetShim(const ShimOptions& options) {
  const Params& params = Params::get();
  rank_ = params.rank;
  hca_ = hca_name_for_rank(rank_, params.local_rank);
  node_ranks_ = params.node_ranks;
  ib_persona_ = ib_persona();
  if (options.allow_wrap && !params.net_inner.empty()) {
    backend_ = make_inner_backend(params.net_inner, &setup_error_);
  } else {
    backend_ = std::make_unique<TcpTransport>(tcp_config_from(params));
  }
  if (options.allow_faults && !params.plan_path.empty()) {
    Injector& injector = Injector::instance(Layer::kNet, "net");
    injector.install(kPoints);
    if (!injector.inert()) injector_ = &injector;
  }
}

CallSite NetShim::site(const char* op, int peer, Direction direction, uint64_t bytes) const {
  CallSite s;
  s.rank = rank_;
  s.world_size = injector_ ? injector_->params().world_size : -1;
  s.op = op;
  s.peer = peer;
  s.direction = direction;
  s.bytes = bytes;
  return s;
}

NetStatus NetShim::init(void** ctx, uint64_t comm_id, ncclNetCommConfig_t* config, ncclDebugLogger_t logger) {
  *ctx = nullptr;
  set_logger(logger);
  if (!backend_) {
    NCCLFI_NET_WARN("%s", setup_error_.c_str());
    return nccl_status(ncclInvalidUsage);
  }
  NetStatus status = backend_->init(ctx, comm_id, config, logger);
  if (status == kNetOk) {
    if (!quiet() && !ib_persona_) {  // NCCL's IB transport says nothing of ncclfi's backend or faults
      NCCLFI_NET_INFO("initialised: backend %s, faults %s", backend_->kind(), faults_on() ? "armed" : "none");
    }
    // The IB persona opens as NCCL's IB transport does, naming its HCA and its out-of-band address: the
    // line that tells which address in a peer's completion error is which node's. Once per process.
    const auto [ifname, address] = backend_->own_interface();
    if (ib_persona_ && !address.empty() && !announced_.exchange(true)) {
      log_nccl_line(ib_init_line(hca_, 1, ifname, address));
    }
  }
  return status;
}

NetStatus NetShim::finalize(void* ctx) {
  if (!backend_)
    return kNetOk;  // tolerant of the init-failure path (NCCL may call finalize after a failed init)
  return backend_->finalize(ctx);
}

NetStatus NetShim::devices(int* ndev) {
  *ndev = 0;
  return backend_ ? backend_->devices(ndev) : nccl_status(ncclInvalidUsage);
}

NetStatus NetShim::get_properties(int dev, ncclNetProperties_v11_t* props) {
  if (!backend_) return nccl_status(ncclInvalidUsage);
  NetStatus status = backend_->get_properties(dev, props);
  // Wrap mode keeps the inner plugin's data path: CUDA pointers (GPUDirect RDMA, with its iflush forwarded)
  // and DMA-BUF when we can forward its regMrDmaBuf; faults then ride on that path (corrupt reaches device
  // memory through the CUDA driver). Our own TCP transport reports host memory only.
  int keep = NCCL_PTR_HOST | NCCL_PTR_CUDA;
  if (backend_->has_reg_mr_dma_buf()) keep |= NCCL_PTR_DMABUF;
  props->ptrSupport &= keep;
  // Nor the device-offload calls (getDeviceMr, irecvConsumed), and the fault layer tracks one buffer
  // per receive: an inner plugin is presented as a plain host NIC without grouped receives.
  props->netDeviceType = NCCL_NET_DEVICE_HOST;
  props->netDeviceVersion = 0;
  props->maxRecvs = 1;
  return status;
}

NetStatus NetShim::connection_fault(const char* point, const ArmedFault* fault, const CallSite& s) {
  const Fault& f = fault->fault();
  const NetAction* action = f.net_action();
  if (action == nullptr) return kNetOk;  // the net injector arms net faults only
  nlohmann::json extra = nlohmann::json::object();
  NetStatus result = kNetOk;
  // One case per action. Only ConnectFail has connection points (the kind registry declares them, and
  // a core unit test checks that no other net action can fire at net/connect or net/accept).
  std::visit(Overloaded{
                 [&](const ConnectFail& fail) {
                   result = nccl_status(to_nccl_result(fail.code));
                   extra["code"] = to_int(fail.code);
                   NCCLFI_NET_FAULT_WARN("injected %s at %s (fault %s)", f.kind.c_str(), point, f.id.c_str());
                 },
                 [&](const Delay&) { not_carried_out(f, point, extra); },
                 [&](const Throttle&) { not_carried_out(f, point, extra); },
                 [&](const Drop&) { not_carried_out(f, point, extra); },
                 [&](const CorruptBits&) { not_carried_out(f, point, extra); },
                 [&](const FailWithCode&) { not_carried_out(f, point, extra); },
                 [&](const Stall&) { not_carried_out(f, point, extra); },
                 [&](const RetryExhausted&) { not_carried_out(f, point, extra); },
             },
             *action);
  injector_->record_injection(*fault, point, s, extra);
  return result;
}

NetStatus NetShim::listen(void* ctx, int dev, void* handle, void** listen_comm) {
  *listen_comm = nullptr;
  if (!backend_) return nccl_status(ncclInvalidUsage);
  return backend_->listen(ctx, dev, handle, listen_comm);
}

NetStatus NetShim::connect(void* ctx, int dev, void* handle, void** send_comm) {
  *send_comm = nullptr;
  if (!backend_) return nccl_status(ncclInvalidUsage);
  if (!wraps()) return backend_->connect(ctx, dev, handle, send_comm);
  const CallSite s = site("connect", -1, Direction::kSend, 0);
  if (const ArmedFault* f = g_connect_point.check(s)) {
    if (NetStatus st = connection_fault(points::kNetConnect, f, s)) return st;
  }
  void* inner = nullptr;
  if (NetStatus st = backend_->connect(ctx, dev, handle, &inner)) return st;
  if (!inner) return kNetOk;
  auto* comm = new Comm();
  comm->inner = inner;
  comm->is_send = true;
  comm->peer = backend_->remote_rank(inner);
  comm->peer_address = backend_->peer_address(inner);
  comm->inside_node = on_this_node(comm->peer);
  *send_comm = track(comm);
  return kNetOk;
}

NetStatus NetShim::accept(void* listen_comm, void** recv_comm) {
  *recv_comm = nullptr;
  if (!backend_) return nccl_status(ncclInvalidUsage);
  if (!wraps()) return backend_->accept(listen_comm, recv_comm);
  const CallSite s = site("accept", -1, Direction::kRecv, 0);
  if (const ArmedFault* f = g_accept_point.check(s)) {
    if (NetStatus st = connection_fault(points::kNetAccept, f, s)) return st;
  }
  void* inner = nullptr;
  if (NetStatus st = backend_->accept(listen_comm, &inner)) return st;
  if (!inner) return kNetOk;
  auto* comm = new Comm();
  comm->inner = inner;
  comm->is_send = false;
  comm->peer = backend_->remote_rank(inner);
  comm->peer_address = backend_->peer_address(inner);
  comm->inside_node = on_this_node(comm->peer);
  *recv_comm = track(comm);
  return kNetOk;
}

NetStatus NetShim::reg_mr(void* comm, void* data, size_t size, int type, void** mhandle) {
  if (!wraps()) return backend_->reg_mr(comm, data, size, type, mhandle);
  *mhandle = nullptr;
  auto mr = std::make_unique<Mr>();
  mr->device = type != NCCL_PTR_HOST;
  if (NetStatus st = backend_->reg_mr(static_cast<Comm*>(comm)->inner, data, size, type, &mr->inner))
    return st;
  *mhandle = mr.release();
  return kNetOk;
}

NetStatus NetShim::reg_mr_dma_buf(void* comm, void* data, size_t size, int type, uint64_t offset, int fd,
                                  void** mhandle) {
  if (!backend_ || !backend_->has_reg_mr_dma_buf()) return nccl_status(ncclInternalError);
  if (!wraps()) return backend_->reg_mr_dma_buf(comm, data, size, type, offset, fd, mhandle);
  *mhandle = nullptr;
  auto mr = std::make_unique<Mr>();
  mr->device = type != NCCL_PTR_HOST;
  if (NetStatus st = backend_->reg_mr_dma_buf(static_cast<Comm*>(comm)->inner, data, size, type, offset, fd,
                                              &mr->inner)) {
    return st;
  }
  *mhandle = mr.release();
  return kNetOk;
}

NetStatus NetShim::iflush(void* recv_comm, int n, void** data, int* sizes, void** mhandles, void** request) {
  *request = nullptr;
  if (!backend_ || !backend_->has_iflush()) return nccl_status(ncclInternalError);
  if (!wraps()) return backend_->iflush(recv_comm, n, data, sizes, mhandles, request);
  if (n < 0 || n > kMaxGroupedRecvs) return -EINVAL;
  auto* comm = static_cast<Comm*>(recv_comm);
  InnerMrs inner_mrs{};
  for (int i = 0; i < n; ++i) inner_mrs[static_cast<size_t>(i)] = inner_mr(mhandles ? mhandles[i] : nullptr);
  void* inner = nullptr;
  if (NetStatus st = backend_->iflush(comm->inner, n, data, sizes, inner_mrs.data(), &inner)) return st;
  if (inner == nullptr) return kNetOk;  // nothing to wait for
  auto* req = new Request();
  req->inner = inner;
  req->comm = comm;
  req->id = next_request_id_.fetch_add(1);
  req->flush = true;
  *request = req;
  return kNetOk;
}

NetStatus NetShim::dereg_mr(void* comm, void* mhandle) {
  if (!wraps()) return backend_->dereg_mr(comm, mhandle);
  std::unique_ptr<Mr> mr(static_cast<Mr*>(mhandle));
  return backend_->dereg_mr(static_cast<Comm*>(comm)->inner, mr ? mr->inner : nullptr);
}

NetStatus NetShim::request_fault(const char* point, const ArmedFault* fault, const CallSite& s,
                                 Request* req) {
  const Fault& f = fault->fault();
  const NetAction* action = f.net_action();
  if (action == nullptr) return kNetOk;  // the net injector arms net faults only
  nlohmann::json extra = {{"request", req->id}, {"bytes", s.bytes}, {"peer", s.peer}};
  NetStatus result = kNetOk;
  // One case per action: a new net action that is not carried out here does not compile.
  std::visit(Overloaded{
                 [&](const Drop&) { req->dropped = true; },
                 [&](const Delay& delay) {
                   const double ms =
                       delay.draw(fault->seed(), f.id, ArmedFault::last_firing_on_this_thread());
                   req->hold_ns += static_cast<int64_t>(std::max(0.0, ms) * 1e6);
                   extra["delay_ms"] = ms;
                 },
                 [&](const Throttle& throttle) {
                   req->comm->bucket.set_rate(throttle.gbps * 1e9);
                   req->comm->throttled_by.store(fault);
                   extra["gbps"] = throttle.gbps;
                 },
                 [&](const Stall& stall) {
                   req->comm->stall_until_ns.store(Clock::mono_ns() + static_cast<int64_t>(stall.ms * 1e6));
                   extra["stall_ms"] = stall.ms;
                 },
                 [&](const CorruptBits& corrupt) {
                   // The kind fires at net/irecv only: the received bytes flip before the completion.
                   if (req->is_send) return not_carried_out(f, point, extra);
                   // Device memory is reached through the CUDA driver; when it cannot be, the fault is
                   // refused here, where the event says so, not at completion.
                   std::string why;
                   if (req->device_memory && !device_memory_reachable(&why)) {
                     NCCLFI_NET_FAULT_WARN("fault %s: corrupt refused: %s", f.id.c_str(), why.c_str());
                     return mark_no_effect(extra, why);
                   }
                   extra["memory"] = req->device_memory ? "device" : "host";
                   req->corrupt = fault;
                   req->corrupt_bits = corrupt.bits;
                   req->corrupt_seed = corrupt_seed(corrupt.seed, fault->seed(), f.id,
                                                    ArmedFault::last_firing_on_this_thread());
                 },
                 [&](const FailWithCode& fail) {
                   result = nccl_status(to_nccl_result(fail.code));
                   extra["code"] = to_int(fail.code);
                   NCCLFI_NET_FAULT_WARN("injected error %d at %s (fault %s)", to_int(fail.code), point,
                                         f.id.c_str());
                 },
                 [&](const RetryExhausted& exhausted) {
                   // The NIC is gone for the whole process: this request and every later one wait out
                   // the retries (test() applies it to requests posted after this one).
                   nic_down_status_.store(nccl_status(to_nccl_result(exhausted.code)));
                   int64_t expected = 0;
                   // The first firing cuts the links in the IB persona: the peers see the NIC go.
                   if (nic_down_since_ns_.compare_exchange_strong(expected, req->post_ns)) {
                     // The port's link goes down now: the HCA raises IBV_EVENT_PORT_ERR at once in this
                     // process, and NCCL's async-event thread prints it, long before any retry runs out.
                     for (const NcclLogLine& line : ib_port_error_lines(nccl_version_for_lines(), hca_, 1)) {
                       log_nccl_line(line);
                     }
                     if (ib_persona_) sever_all_comms();
                   }
                   // A transfer to a peer on this node never crossed the NIC.
                   if (!req->comm->inside_node) req->fail_at_ns = req->post_ns + nic_retry_budget_ns();
                   extra["code"] = to_int(exhausted.code);
                   extra["retry_budget_ms"] = static_cast<double>(nic_retry_budget_ns()) / 1e6;
                 },
                 // Fires only at connection points (see connection_fault).
                 [&](const ConnectFail&) { not_carried_out(f, point, extra); },
             },
             *action);
  injector_->record_injection(*fault, point, s, extra);
  return result;
}

NetStatus NetShim::isend(void* send_comm, void* data, size_t size, int tag, void* mhandle, void* phandle,
                         void** request) {
  *request = nullptr;
  if (!wraps()) return backend_->isend(send_comm, data, size, tag, mhandle, phandle, request);
  auto* comm = static_cast<Comm*>(send_comm);
  Request* req = comm->deferred;
  comm->deferred = nullptr;
  if (!req) {
    req = new Request();
    req->comm = comm;
    req->id = next_request_id_.fetch_add(1);
    req->is_send = true;
    req->post_ns = Clock::mono_ns();
    req->data = static_cast<char*>(data);
    req->bytes = size;
    req->peer = comm->peer;
    req->device_memory = is_device_mr(mhandle);
    const CallSite s = site("isend", comm->peer, Direction::kSend, size);
    if (const ArmedFault* f = g_isend_point.check(s)) {
      if (NetStatus st = request_fault(points::kNetIsend, f, s, req)) {
        delete req;
        return st;
      }
    }
  }
  NetStatus st = backend_->isend(comm->inner, data, size, tag, inner_mr(mhandle), phandle, &req->inner);
  if (st != kNetOk && ib_persona_ && to_nccl_result(st) == ncclRemoteError) {
    hold_until_retries_exhausted(req);  // a queue pair to a vanished peer takes the post, then fails
    *request = req;
    return kNetOk;
  }
  if (st != kNetOk) {
    delete req;
    return st;
  }
  if (!req->inner) {
    comm->deferred = req;  // NCCL posts the same send again; keep the decision made for it
    return kNetOk;
  }
  *request = req;
  return kNetOk;
}

NetStatus NetShim::irecv(void* recv_comm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                         void** phandles, void** request) {
  // NCCL may pre-set *request to NCCL_NET_OPTIONAL_RECV_COMPLETION: always overwrite it.
  *request = nullptr;
  if (!wraps()) return backend_->irecv(recv_comm, n, data, sizes, tags, mhandles, phandles, request);
  if (n < 0 || n > kMaxGroupedRecvs) return -EINVAL;
  auto* comm = static_cast<Comm*>(recv_comm);
  Request* req = comm->deferred;
  comm->deferred = nullptr;
  if (!req) {
    req = new Request();
    req->comm = comm;
    req->id = next_request_id_.fetch_add(1);
    req->is_send = false;
    req->post_ns = Clock::mono_ns();
    req->data = n > 0 ? static_cast<char*>(data[0]) : nullptr;
    req->bytes = n > 0 ? sizes[0] : 0;
    req->peer = n > 0 ? tags[0] : comm->peer;
    req->device_memory = n > 0 && mhandles && is_device_mr(mhandles[0]);
    const CallSite s = site("irecv", req->peer, Direction::kRecv, req->bytes);
    if (const ArmedFault* f = g_irecv_point.check(s)) {
      if (NetStatus st = request_fault(points::kNetIrecv, f, s, req)) {
        delete req;
        return st;
      }
    }
  }
  InnerMrs inner_mrs{};
  for (int i = 0; i < n; ++i) inner_mrs[static_cast<size_t>(i)] = inner_mr(mhandles ? mhandles[i] : nullptr);
  NetStatus st = backend_->irecv(comm->inner, n, data, sizes, tags, inner_mrs.data(), phandles, &req->inner);
  if (st != kNetOk && ib_persona_ && to_nccl_result(st) == ncclRemoteError) {
    hold_until_retries_exhausted(req);
    *request = req;
    return kNetOk;
  }
  if (st != kNetOk) {
    delete req;
    return st;
  }
  if (!req->inner) {
    comm->deferred = req;
    return kNetOk;
  }
  *request = req;
  return kNetOk;
}

void NetShim::finish_completion(Request* req, int64_t now) {
  if (req->corrupt && req->size > 0) {  // a receive (request_fault)
    const Fault& f = req->corrupt->fault();
    const uint64_t bits = req->corrupt_bits;
    std::string why;
    if (req->device_memory &&
        !flip_device_bits(req->data, static_cast<size_t>(req->size), bits, req->corrupt_seed, &why)) {
      // Reachability was checked when the receive was posted: only a CUDA error gets here.
      NCCLFI_NET_FAULT_WARN("fault %s: corrupt of device memory in request %llu failed: %s", f.id.c_str(),
                            static_cast<unsigned long long>(req->id), why.c_str());
    } else {
      if (!req->device_memory) flip_bits(req->data, static_cast<size_t>(req->size), bits, req->corrupt_seed);
      NCCLFI_NET_FAULT_INFO("fault %s: flipped %llu bits in request %llu (%s memory)", f.id.c_str(),
                            static_cast<unsigned long long>(bits), static_cast<unsigned long long>(req->id),
                            req->device_memory ? "device" : "host");
    }
  }
  int64_t release = now + req->hold_ns;
  // A throttle lasts as long as its fault's window: when that closes (trigger.duration_s) the link heals.
  if (const ArmedFault* by = req->comm->throttled_by.load(); by != nullptr && !by->window_open_now()) {
    req->comm->bucket.set_rate(0);
    req->comm->throttled_by.store(nullptr);
  }
  if (req->comm->bucket.active()) {
    // The bytes could have started flowing when the request was posted: a throttled link that was idle
    // delivers the first message size/rate after the post, not after the (faster) real arrival.
    release = std::max(release, req->comm->bucket.reserve(static_cast<uint64_t>(req->size), req->post_ns));
  }
  req->release_ns = release;
}

bool NetShim::on_this_node(int peer) const {
  return peer >= 0 && peer != rank_ &&
         std::find(node_ranks_.begin(), node_ranks_.end(), peer) != node_ranks_.end();
}

int64_t NetShim::nic_retry_budget_ns() {
  // An exponent the verbs spec reads as "never time out" leaves the request pending for ever, as the
  // real queue pair would.
  const auto budget = ib_retry_budget(ib_retry_settings_from_env());
  if (!budget) return kNeverNs;
  return std::chrono::duration_cast<std::chrono::nanoseconds>(*budget).count();
}

NetStatus NetShim::fail_retries_exhausted(Request* req) const {
  // What NCCL's IB transport writes for a work completion with IBV_WC_RETRY_EXC_ERR (status 12), in the
  // release in use, once per request (a failed CQE is polled once); the peer is the connection's socket
  // address, as NCCL takes it from its own socket.
  if (!req->failure_logged) {
    IbCompletionFailure failure;
    failure.peer = req->comm->peer_address.empty() ? "0.0.0.0<0>" : req->comm->peer_address;
    failure.send = req->is_send;
    failure.bytes = req->bytes;
    failure.hca = hca_;
    failure.request = req;
    failure.comm = req->comm;
    failure.wr_id = req->id & 0xff;  // NCCL's wr_id carries the request's slot (0..255)
    failure.qp_num = static_cast<uint32_t>(0x100 + (reinterpret_cast<uintptr_t>(req->comm) >> 4) % 0x10000);
    for (const NcclLogLine& line : ib_completion_error_lines(nccl_version_for_lines(), failure)) {
      log_nccl_line(line);
    }
    req->failure_logged = true;
  }
  if (req->fail_status != kNetOk) return req->fail_status;
  return nic_down_status_.load();
}

void NetShim::hold_until_retries_exhausted(Request* req) {
  int64_t expected = 0;
  const int64_t now = Clock::mono_ns();
  req->comm->lost_at_ns.compare_exchange_strong(expected, now);
  if (req->comm->inside_node) {  // NVLink or PCIe to a peer that is gone: waits until the watchdog
    req->fail_at_ns = kNeverNs;
    return;
  }
  // The queue pair kept retrying since the connection went quiet: the budget counts from then (or from
  // the post, for a request posted later).
  req->fail_at_ns = std::max(req->post_ns, req->comm->lost_at_ns.load()) + nic_retry_budget_ns();
  req->fail_status = nccl_status(ib_completion_error_is_remote(nccl_version_for_lines()) ? ncclRemoteError
                                                                                         : ncclSystemError);
}

void NetShim::sever_all_comms() {
  std::lock_guard<std::mutex> lock(comms_mu_);
  for (Comm* comm : comms_) {
    if (!comm->inside_node) backend_->sever(comm->inner);
  }
}

NetShim::Comm* NetShim::track(Comm* comm) {
  std::lock_guard<std::mutex> lock(comms_mu_);
  comms_.insert(comm);
  return comm;
}

void NetShim::untrack(Comm* comm) {
  std::lock_guard<std::mutex> lock(comms_mu_);
  comms_.erase(comm);
}

NetStatus NetShim::test(void* request, int* done, int* sizes) {
  if (!wraps()) return backend_->test(request, done, sizes);
  *done = 0;
  auto* req = static_cast<Request*>(request);
  if (req->fail_at_ns == 0 && !req->comm->inside_node) {
    if (const int64_t since = nic_down_since_ns_.load(); since != 0) {
      req->fail_at_ns = std::max(req->post_ns, since) + nic_retry_budget_ns();
    }
  }
  if (req->fail_at_ns != 0) {  // a dead NIC: nothing completes, then the retries run out
    if (Clock::mono_ns() < req->fail_at_ns) return kNetOk;
    return fail_retries_exhausted(req);
  }
  if (!req->inner_done) {
    int inner_done = 0;
    int size = 0;
    if (NetStatus st = backend_->test(req->inner, &inner_done, &size)) {
      if (!ib_persona_ || to_nccl_result(st) != ncclRemoteError) return st;
      hold_until_retries_exhausted(req);  // the connection went: retried until the budget is spent
      return kNetOk;
    }
    if (!inner_done) return kNetOk;
    req->inner_done = true;
    req->size = size;
    if (req->flush) {
      *done = 1;
      delete req;
      return kNetOk;
    }
    const CallSite s = site("test", req->peer, req->is_send ? Direction::kSend : Direction::kRecv,
                            static_cast<uint64_t>(size));
    if (const ArmedFault* f = g_test_point.check(s)) {
      if (NetStatus st = request_fault(points::kNetTest, f, s, req)) return st;
    }
    finish_completion(req, Clock::mono_ns());
  }
  if (req->dropped) return kNetOk;  // the completion is never reported
  const int64_t now = Clock::mono_ns();
  if (now < req->release_ns || now < req->comm->stall_until_ns.load(std::memory_order_relaxed)) return kNetOk;
  *done = 1;
  if (sizes) *sizes = req->size;
  delete req;
  return kNetOk;
}

NetStatus NetShim::close_send(void* send_comm) {
  if (!wraps()) return backend_->close_send(send_comm);
  auto* comm = static_cast<Comm*>(send_comm);
  untrack(comm);
  NetStatus st = backend_->close_send(comm->inner);
  delete comm->deferred;
  delete comm;
  return st;
}

NetStatus NetShim::close_recv(void* recv_comm) {
  if (!wraps()) return backend_->close_recv(recv_comm);
  auto* comm = static_cast<Comm*>(recv_comm);
  untrack(comm);
  NetStatus st = backend_->close_recv(comm->inner);
  delete comm->deferred;
  delete comm;
  return st;
}

NetStatus NetShim::close_listen(void* listen_comm) {
  return backend_->close_listen(listen_comm);
}

}  // namespace ncclfi::net
