// The verbs-layer faults: see the table in verbs_shim.h.
#include "verbs_shim.h"

#include <time.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "ncclfi/effects.h"
#include "ncclfi/fault_action.h"
#include "ncclfi/fault_points.h"
#include "ncclfi/ib_retry_budget.h"
#include "ncclfi/ib_verbs_codes.h"
#include "ncclfi/injector.h"

namespace ncclfi::verbs {
namespace {

static_assert(ib::kWcWrFlushErr == IBV_WC_WR_FLUSH_ERR && ib::kWcRetryExcErr == IBV_WC_RETRY_EXC_ERR &&
                  ib::kWcRemAccessErr == IBV_WC_REM_ACCESS_ERR && ib::kPortDown == IBV_PORT_DOWN &&
                  ib::kPortActive == IBV_PORT_ACTIVE,
              "ib_verbs_codes.h disagrees with <infiniband/verbs.h>");
constexpr bool statuses_match() {
  for (size_t i = 0; i < ib::kWcStatuses.size(); ++i) {
    if (ib::kWcStatuses[i].value != static_cast<int>(i)) return false;
  }
  return ib::kWcStatuses.back().value == IBV_WC_TM_RNDV_INCOMPLETE;
}
static_assert(statuses_match(), "ib_verbs_codes.h's statuses are not enum ibv_wc_status");

FaultPoint g_poll_cq(points::kVerbsPollCq);
FaultPoint g_post_send(points::kVerbsPostSend);
FaultPoint g_post_recv(points::kVerbsPostRecv);
FaultPoint g_query_port(points::kVerbsQueryPort);
FaultPoint* const kPoints[] = {&g_poll_cq, &g_post_send, &g_post_recv, &g_query_port};

// The verbs wrapper's exception barrier reports here (ncclfi/effects.h: guarded).
void report(const char* where, const char* what) noexcept {
  report_internal_error("verbs", where, what);
}

int64_t mono_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

using PollFn = int (*)(ibv_cq*, int, ibv_wc*);
using PostSendFn = int (*)(ibv_qp*, ibv_send_wr*, ibv_send_wr**);
using PostRecvFn = int (*)(ibv_qp*, ibv_recv_wr*, ibv_recv_wr**);
using QueryPortFn = int (*)(ibv_context*, uint8_t, ibv_port_attr*, size_t);

struct RealOps {
  PollFn poll_cq = nullptr;
  PostSendFn post_send = nullptr;
  PostRecvFn post_recv = nullptr;
  QueryPortFn query_port = nullptr;  // the verbs_context op (NCCL's ibv_query_port_ex), when there is one
};

// A completion the wrapper has taken from the real CQ and not yet reported.
struct Held {
  ibv_wc wc{};
  int64_t release_ns = 0;
  bool errors_qp = false;  // an error completion: its QP flushes from its release on
};

struct PortState {
  bool down = false;
  int speed_code = 0;
  int width_code = 0;
};

using QpKey = std::pair<ibv_context*, uint32_t>;

class VerbsShim {
 public:
  static VerbsShim& get() {
    static VerbsShim* shim = new VerbsShim();  // never destroyed: NCCL polls until exit
    return *shim;
  }
  bool active() const { return injector_ != nullptr; }

  void patch(ibv_context* ctx);
  void forget(ibv_context* ctx);
  void forget(ibv_cq* cq);
  void learn_port(ibv_qp* qp, uint8_t port);
  void forget(ibv_qp* qp);
  int poll(ibv_cq* cq, int n, ibv_wc* out);
  int post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad);
  int post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad);
  int query_port_op(ibv_context* ctx, uint8_t port, ibv_port_attr* attr, size_t len);
  void apply_port(ibv_context* ctx, uint8_t port, ibv_port_attr* attr);
  // The query_port point: a port_down or link_degrade that fires changes what the port reads from then on.
  void fire_port_fault(ibv_context* ctx, uint8_t port, const ibv_port_attr& attr);
  PortState port_state(ibv_context* ctx, uint8_t port);

 private:
  VerbsShim() {
    const Params& params = Params::get();
    rank_ = params.rank;
    if (params.plan_path.empty()) return;
    Injector& injector = Injector::instance(Layer::kVerbs, "verbs");
    injector.install(kPoints);
    if (!injector.inert()) injector_ = &injector;
  }
  RealOps ops_of(ibv_context* ctx) {
    std::lock_guard lock(mu_);
    auto it = contexts_.find(ctx);
    return it == contexts_.end() ? RealOps{} : it->second;
  }
  // `ctx` and `port`: where the call is (its HCA, its port; -1 unknown), for a target's device and port.
  CallSite site(const char* op, Direction dir, uint64_t bytes, ibv_context* ctx = nullptr,
                int port = -1) const {
    CallSite s;
    s.rank = rank_;
    s.world_size = injector_->params().world_size;
    s.op = op;
    s.direction = dir;
    s.bytes = bytes;
    if (ctx != nullptr && ctx->device != nullptr) s.device = ctx->device->name;
    s.port = port;
    return s;
  }
  // The port a QP was moved to INIT on, or -1 when it never was (through this library).
  int port_of(ibv_context* ctx, uint32_t qp_num) {
    std::lock_guard lock(mu_);
    auto it = qp_ports_.find({ctx, qp_num});
    return it == qp_ports_.end() ? -1 : it->second;
  }
  // Decides what happens to one completion fresh from the real CQ; false: it is never reported.
  bool admit(ibv_cq* cq, const ibv_wc& wc, Held* held);
  void remember_post(ibv_context* ctx, uint32_t qp_num, uint64_t wr_id);

  Injector* injector_ = nullptr;
  int rank_ = -1;
  std::mutex mu_;
  std::map<ibv_context*, RealOps> contexts_;
  std::map<ibv_cq*, std::vector<Held>> held_;
  std::set<QpKey> errored_;
  std::map<std::pair<QpKey, uint64_t>, int64_t> posted_ns_;  // (QP, wr_id) -> when it was posted
  std::map<std::pair<ibv_context*, uint8_t>, PortState> ports_;
  std::map<QpKey, int> qp_ports_;  // each QP's port (ibv_modify_qp with IBV_QP_PORT)
};

// The hooks NCCL calls through the context's ops. Each is an exception barrier (ncclfi/effects.h): nothing
// is thrown into NCCL's C code. Inside, a fault decision that fails lets the call go on unfaulted; what
// fails around the real call gets the answer a failing provider gives, which NCCL reports as an IB error.
int poll_cq_hook(ibv_cq* cq, int n, ibv_wc* wc) {
  return guarded(report, "ibv_poll_cq", -1, [&] { return VerbsShim::get().poll(cq, n, wc); });
}
template <typename Wr>
int failed_post(Wr* wr, Wr** bad) {
  if (bad != nullptr) *bad = wr;  // nothing is known to be posted
  return EIO;
}
int post_send_hook(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad) {
  const auto rc = guarded(report, "ibv_post_send", std::optional<int>{},
                          [&] { return std::optional<int>(VerbsShim::get().post_send(qp, wr, bad)); });
  return rc ? *rc : failed_post(wr, bad);
}
int post_recv_hook(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  const auto rc = guarded(report, "ibv_post_recv", std::optional<int>{},
                          [&] { return std::optional<int>(VerbsShim::get().post_recv(qp, wr, bad)); });
  return rc ? *rc : failed_post(wr, bad);
}
int query_port_hook(ibv_context* ctx, uint8_t port, ibv_port_attr* attr, size_t len) {
  return guarded(report, "ibv_query_port", EIO,
                 [&] { return VerbsShim::get().query_port_op(ctx, port, attr, len); });
}

void VerbsShim::patch(ibv_context* ctx) {
  if (!active() || ctx == nullptr) return;
  RealOps real;
  real.poll_cq = ctx->ops.poll_cq;
  real.post_send = ctx->ops.post_send;
  real.post_recv = ctx->ops.post_recv;
  verbs_context* vctx = verbs_get_ctx_op(ctx, query_port);
  if (vctx != nullptr) real.query_port = vctx->query_port;
  {
    std::lock_guard lock(mu_);
    contexts_[ctx] = real;
  }
  ctx->ops.poll_cq = &poll_cq_hook;
  ctx->ops.post_send = &post_send_hook;
  ctx->ops.post_recv = &post_recv_hook;
  if (vctx != nullptr) vctx->query_port = &query_port_hook;
}

void VerbsShim::forget(ibv_context* ctx) {
  std::lock_guard lock(mu_);
  contexts_.erase(ctx);
  std::erase_if(errored_, [ctx](const QpKey& k) { return k.first == ctx; });
  std::erase_if(posted_ns_, [ctx](const auto& e) { return e.first.first.first == ctx; });
  std::erase_if(ports_, [ctx](const auto& e) { return e.first.first == ctx; });
  std::erase_if(qp_ports_, [ctx](const auto& e) { return e.first.first == ctx; });
}

void VerbsShim::forget(ibv_cq* cq) {
  std::lock_guard lock(mu_);
  held_.erase(cq);
}

void VerbsShim::learn_port(ibv_qp* qp, uint8_t port) {
  if (!active()) return;
  std::lock_guard lock(mu_);
  qp_ports_[{qp->context, qp->qp_num}] = port;
}

void VerbsShim::forget(ibv_qp* qp) {
  std::lock_guard lock(mu_);
  qp_ports_.erase({qp->context, qp->qp_num});  // the number may be given to a new QP
}

void VerbsShim::remember_post(ibv_context* ctx, uint32_t qp_num, uint64_t wr_id) {
  std::lock_guard lock(mu_);
  // Unsignaled sends never complete: bound the table rather than track signaling per QP.
  if (posted_ns_.size() > (1U << 16)) posted_ns_.clear();
  posted_ns_[{{ctx, qp_num}, wr_id}] = mono_ns();
}

bool VerbsShim::admit(ibv_cq* cq, const ibv_wc& wc, Held* held) {
  const int64_t now = mono_ns();
  held->wc = wc;
  held->release_ns = now;
  int64_t posted = now;
  {
    std::lock_guard lock(mu_);
    auto it = posted_ns_.find({{cq->context, wc.qp_num}, wc.wr_id});
    if (it != posted_ns_.end()) {
      posted = it->second;
      posted_ns_.erase(it);
    }
  }
  if (wc.status != IBV_WC_SUCCESS) return true;  // a real error passes untouched
  const bool is_recv = (wc.opcode & IBV_WC_RECV) != 0;
  const int port = port_of(cq->context, wc.qp_num);
  const ArmedFault* f = g_poll_cq.check(site("poll_cq", is_recv ? Direction::kRecv : Direction::kSend,
                                             is_recv ? wc.byte_len : 0, cq->context, port));
  if (f == nullptr) return true;
  const VerbsAction* action = f->fault().verbs_action();
  if (action == nullptr) return true;
  nlohmann::json extra = {{"qp_num", wc.qp_num}, {"wr_id", wc.wr_id}};
  if (cq->context->device != nullptr) extra["device"] = cq->context->device->name;
  if (port > 0) extra["port"] = port;
  bool delivered = true;
  std::visit(Overloaded{[&](const Delay& d) {
                          const double ms =
                              d.draw(f->seed(), f->fault().id, ArmedFault::last_firing_on_this_thread());
                          held->release_ns = now + static_cast<int64_t>(ms * 1e6);
                          extra["delay_ms"] = ms;
                        },
                        [&](const Drop&) { delivered = false; },
                        [&](const CompletionError& e) {
                          held->wc.status = static_cast<ibv_wc_status>(e.status);
                          held->wc.vendor_err = e.vendor_err;
                          held->errors_qp = true;
                          if (e.after_retry_budget) {
                            const auto budget = ib_retry_budget(ib_retry_settings_from_env());
                            // An exponent the spec reads as "never time out": the NIC never gives up.
                            if (!budget) delivered = false;
                            held->release_ns = posted + (budget ? budget->count() * 1000 : 0);
                            extra["hold_ms"] = static_cast<double>(held->release_ns - now) / 1e6;
                            extra["retry_budget_ms"] =
                                budget ? static_cast<double>(budget->count()) / 1e3 : -1.0;
                          }
                          extra["status"] = e.status;
                          extra["status_name"] = std::string(ib::wc_status_name(e.status));
                        },
                        [&](const PortDown&) {}, [&](const LinkDegrade&) {}, [&](const PostError&) {}},
             *action);
  injector_->record_injection(*f, g_poll_cq.name(), site("poll_cq", Direction::kAny, 0), extra);
  return delivered;
}

int VerbsShim::poll(ibv_cq* cq, int n, ibv_wc* out) {
  const PollFn real = ops_of(cq->context).poll_cq;
  if (real == nullptr || n <= 0) return real == nullptr ? -1 : 0;
  ibv_wc fresh[16];
  const int got = real(cq, static_cast<int>(std::size(fresh)), fresh);
  if (got < 0) return got;
  std::vector<Held> admitted;
  for (int i = 0; i < got; ++i) {
    // Should the fault decision fail, the completion is reported untouched.
    const auto h = guarded(report, "ibv_poll_cq", std::optional<Held>(Held{fresh[i]}), [&] {
      Held held;
      return admit(cq, fresh[i], &held) ? std::optional<Held>(held) : std::nullopt;
    });
    if (h) admitted.push_back(*h);
  }
  const int64_t now = mono_ns();
  std::lock_guard lock(mu_);
  std::vector<Held>& queue = held_[cq];
  queue.insert(queue.end(), admitted.begin(), admitted.end());
  // Report what is due, in order, keeping each QP's completions in the order they came: a held completion
  // holds the later ones of its QP behind it (a send queue completes in order).
  std::set<uint32_t> blocked;
  int done = 0;
  auto it = queue.begin();
  while (it != queue.end() && done < n) {
    if (blocked.contains(it->wc.qp_num) || it->release_ns > now) {
      blocked.insert(it->wc.qp_num);
      ++it;
      continue;
    }
    const QpKey key{cq->context, it->wc.qp_num};
    if (errored_.contains(key) && it->wc.status == IBV_WC_SUCCESS) it->wc.status = IBV_WC_WR_FLUSH_ERR;
    if (it->errors_qp) errored_.insert(key);
    out[done++] = it->wc;
    it = queue.erase(it);
  }
  return done;
}

int VerbsShim::post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad) {
  const PostSendFn real = ops_of(qp->context).post_send;
  if (real == nullptr) return EINVAL;
  uint64_t bytes = 0;
  if (wr != nullptr) {
    for (int i = 0; i < wr->num_sge; ++i) bytes += wr->sg_list[i].length;
  }
  // Should the fault decision fail, the post goes on unfaulted.
  const auto refused = guarded(report, "ibv_post_send", std::optional<int>{}, [&]() -> std::optional<int> {
    const CallSite where =
        site("post_send", Direction::kSend, bytes, qp->context, port_of(qp->context, qp->qp_num));
    if (const ArmedFault* f = g_post_send.check(where)) {
      if (const VerbsAction* a = f->fault().verbs_action(); a != nullptr) {
        if (const auto* pe = std::get_if<PostError>(a)) {
          injector_->record_injection(
              *f, g_post_send.name(), where,
              {{"errno", pe->errno_value}, {"qp_num", qp->qp_num}, {"port", where.port}});
          return pe->errno_value;
        }
      }
    }
    for (ibv_send_wr* w = wr; w != nullptr; w = w->next) {
      if ((w->send_flags & IBV_SEND_SIGNALED) != 0) remember_post(qp->context, qp->qp_num, w->wr_id);
    }
    return std::nullopt;
  });
  if (refused) {
    *bad = wr;
    return *refused;
  }
  return real(qp, wr, bad);
}

int VerbsShim::post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  const PostRecvFn real = ops_of(qp->context).post_recv;
  if (real == nullptr) return EINVAL;
  // Should the fault decision fail, the post goes on unfaulted.
  const auto refused = guarded(report, "ibv_post_recv", std::optional<int>{}, [&]() -> std::optional<int> {
    const CallSite where =
        site("post_recv", Direction::kRecv, 0, qp->context, port_of(qp->context, qp->qp_num));
    if (const ArmedFault* f = g_post_recv.check(where)) {
      if (const VerbsAction* a = f->fault().verbs_action(); a != nullptr) {
        if (const auto* pe = std::get_if<PostError>(a)) {
          injector_->record_injection(
              *f, g_post_recv.name(), where,
              {{"errno", pe->errno_value}, {"qp_num", qp->qp_num}, {"port", where.port}});
          return pe->errno_value;
        }
      }
    }
    for (ibv_recv_wr* w = wr; w != nullptr; w = w->next) remember_post(qp->context, qp->qp_num, w->wr_id);
    return std::nullopt;
  });
  if (refused) {
    *bad = wr;
    return *refused;
  }
  return real(qp, wr, bad);
}

int VerbsShim::query_port_op(ibv_context* ctx, uint8_t port, ibv_port_attr* attr, size_t len) {
  const QueryPortFn real = ops_of(ctx).query_port;
  if (real == nullptr) return EINVAL;
  const int rc = real(ctx, port, attr, len);
  if (rc == 0) apply_port(ctx, port, attr);
  return rc;
}

void VerbsShim::fire_port_fault(ibv_context* ctx, uint8_t port, const ibv_port_attr& attr) {
  const ArmedFault* f = g_query_port.check(site("query_port", Direction::kAny, 0, ctx, port));
  const VerbsAction* a = f != nullptr ? f->fault().verbs_action() : nullptr;
  if (a == nullptr) return;
  nlohmann::json extra = {{"port", port}};
  std::lock_guard lock(mu_);
  PortState& st = ports_[{ctx, port}];
  if (std::holds_alternative<PortDown>(*a)) {
    st.down = true;
    extra["state"] = "IBV_PORT_DOWN";
  } else if (const auto* d = std::get_if<LinkDegrade>(a)) {
    if (d->speed_code != 0) st.speed_code = d->speed_code;
    if (d->width_code != 0) st.width_code = d->width_code;
    extra["active_speed"] = d->speed_code != 0 ? d->speed_code : attr.active_speed;
    extra["active_width"] = d->width_code != 0 ? d->width_code : attr.active_width;
  }
  injector_->record_injection(*f, g_query_port.name(), site("query_port", Direction::kAny, 0, ctx, port),
                              extra);
}

void VerbsShim::apply_port(ibv_context* ctx, uint8_t port, ibv_port_attr* attr) {
  if (!active()) return;
  // The real library may answer one query through the other (the exported call and the context op): one
  // query, one check.
  thread_local int depth = 0;
  if (depth > 0) return;
  struct Nested {
    Nested() { ++depth; }
    ~Nested() { --depth; }
    Nested(const Nested&) = delete;
    Nested& operator=(const Nested&) = delete;
  } nested;
  // Should the fault decision fail, the port reads as the faults before it left it.
  guarded(report, "ibv_query_port", [&] { fire_port_fault(ctx, port, *attr); });
  const PortState st = port_state(ctx, port);
  if (st.down) {
    attr->state = IBV_PORT_DOWN;
    attr->phys_state = ib::kPhysStateDisabled;
  }
  if (st.speed_code != 0) attr->active_speed = static_cast<uint8_t>(st.speed_code);
  if (st.width_code != 0) attr->active_width = static_cast<uint8_t>(st.width_code);
}

PortState VerbsShim::port_state(ibv_context* ctx, uint8_t port) {
  std::lock_guard lock(mu_);
  auto it = ports_.find({ctx, port});
  return it == ports_.end() ? PortState{} : it->second;
}

int lanes_of(int width_code) {
  for (const auto& w : ib::kLinkWidths) {
    if (w.code == width_code) return w.mbps;
  }
  return 1;
}
int lane_mbps_of(int speed_code) {
  for (const auto& s : ib::kLinkSpeeds) {
    if (s.code == speed_code) return s.mbps;
  }
  return 0;
}

}  // namespace

// The wrapper's own answers to libibverbs calls (intercepts.cc) end here: each is an exception barrier too,
// and what fails leaves the call as the real library answered it.
void on_open_device(ibv_context* ctx) {
  guarded(report, "ibv_open_device", [&] { VerbsShim::get().patch(ctx); });
}
void on_close_device(ibv_context* ctx) {
  guarded(report, "ibv_close_device", [&] { VerbsShim::get().forget(ctx); });
}
void on_destroy_cq(ibv_cq* cq) {
  guarded(report, "ibv_destroy_cq", [&] { VerbsShim::get().forget(cq); });
}
void on_modify_qp(ibv_qp* qp, const ibv_qp_attr& attr, int mask) {
  if ((mask & IBV_QP_PORT) == 0) return;
  guarded(report, "ibv_modify_qp", [&] { VerbsShim::get().learn_port(qp, attr.port_num); });
}
void on_destroy_qp(ibv_qp* qp) {
  guarded(report, "ibv_destroy_qp", [&] { VerbsShim::get().forget(qp); });
}
void on_query_port(ibv_context* ctx, uint8_t port, ibv_port_attr* attr) {
  guarded(report, "ibv_query_port", [&] { VerbsShim::get().apply_port(ctx, port, attr); });
}

uint64_t on_query_port_speed(ibv_context* ctx, uint8_t port, uint64_t speed, const ibv_port_attr& real_attr) {
  return guarded(report, "ibv_query_port_speed", speed, [&] {
    VerbsShim& shim = VerbsShim::get();
    if (!shim.active()) return speed;
    const PortState st = shim.port_state(ctx, port);
    if (st.speed_code == 0 && st.width_code == 0) return speed;
    const int speed_code = st.speed_code != 0 ? st.speed_code : real_attr.active_speed;
    const int width_code = st.width_code != 0 ? st.width_code : real_attr.active_width;
    // The rate NCCL would compute from the codes, in ibv_query_port_speed's 100 Mbit/s units.
    return static_cast<uint64_t>(lane_mbps_of(speed_code)) * static_cast<uint64_t>(lanes_of(width_code)) /
           100;
  });
}

}  // namespace ncclfi::verbs
