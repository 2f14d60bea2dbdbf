#include "intercept.h"

#include <chrono>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>

#include "fault_actions.h"
#include "ncclfi/effects.h"
#include "op_timing.h"
#include "preload_state.h"

namespace ncclfi::preload {
namespace {

// The preload's exception barrier reports here (ncclfi/effects.h: guarded): our own failure must never
// change the job, so the call goes on as if no fault were armed.
void report(const char* where, const char* what) noexcept {
  report_internal_error("preload", where, what);
}

CallSite site_for(CommInfo* info, const char* op) {
  CallSite site;
  site.rank = info != nullptr ? info->rank.load() : env_rank();
  site.world_size = info != nullptr ? info->nranks.load() : -1;
  site.comm = info != nullptr ? info->index : -1;
  site.op = op;
  return site;
}

void trace_op(const OpCall& call, const CallSite& site, uint64_t seq, bool in_group) {
  nlohmann::json fields = {
      {"comm", site.comm},        {"seq", seq},          {"op", site.op},
      {"bytes", site.bytes},      {"count", call.count}, {"dtype", static_cast<int>(call.datatype)},
      {"nranks", site.world_size}};
  if (call.root >= 0) fields["root"] = call.root;
  if (call.peer >= 0) fields["peer"] = call.peer;
  if (in_group) fields["in_group"] = true;
  injector().events().write_for_rank(site.rank, ev::kOpTrace, fields);
}

// Runs the group's deferred corruptions now that NCCL has launched (or queued) its work.
void after_outermost_group_end(GroupState& group, ncclResult_t rc) {
  auto deferred = std::move(group.deferred);
  group.deferred.clear();
  group.first_comm = nullptr;
  if (rc != ncclSuccess && rc != ncclInProgress) return;  // nothing was launched
  for (auto& [comm, job] : deferred) {
    if (rc == ncclInProgress && comm != nullptr) {
      std::lock_guard lock(comm->pending_mu);
      comm->pending.emplace_back(std::move(job));
    } else {
      job();
    }
  }
}

}  // namespace

ncclResult_t intercept_op(const OpCall& call, ForwardFn forward_fn) {
  ReentryScope scope;
  if (scope.nested()) return forward_fn();
  Forwarder forward(forward_fn);
  const auto called = std::chrono::steady_clock::now();
  CommInfo* info = nullptr;
  CallSite site;
  uint64_t seq = 0;
  bool described = false;
  const std::optional<ncclResult_t> faulted = guarded(
      report, op_name(call.kind), std::optional<ncclResult_t>{}, [&]() -> std::optional<ncclResult_t> {
        info = comms().lookup(call.comm);
        site = site_for(info, op_name(call.kind));
        site.peer = call.peer;
        if (call.kind == OpKind::kSend) site.direction = Direction::kSend;
        if (call.kind == OpKind::kRecv) site.direction = Direction::kRecv;
        site.bytes = op_bytes(call, site.world_size);
        seq = info != nullptr ? info->next_seq() : 0;
        described = true;
        GroupState& group = group_state();
        if (group.depth > 0 && group.first_comm == nullptr) group.first_comm = call.comm;
        if (trace_ops()) trace_op(call, site, seq, group.depth > 0);
        FaultPoint& point = op_point(call.kind);
        if (const ArmedFault* fault = point.check(site)) {
          return apply_fault(FiredFault{fault, point.name(), site, info, seq}, forward, &call);
        }
        return std::nullopt;
      });
  if (faulted) return *faulted;
  const ncclResult_t rc = forward();
  if (described && time_ops()) {
    guarded(report, "op timing", [&] { time_op(call, site, seq, info, rc, called); });
  }
  return rc;
}

ncclResult_t intercept_group_start(ForwardFn forward) {
  ReentryScope scope;
  if (scope.nested()) return forward();
  ncclResult_t rc = forward();
  if (rc == ncclSuccess) ++group_state().depth;
  return rc;
}

ncclResult_t intercept_group_end(ForwardFn forward_fn, bool simulate) {
  ReentryScope scope;
  if (scope.nested()) return forward_fn();
  Forwarder forward(forward_fn);
  GroupState& group = group_state();
  ncclResult_t rc = ncclSuccess;
  bool fault_decided = false;
  guarded(report, "ncclGroupEnd", [&] {
    // Only the outermost end launches anything, so only it is a fault site (and counts as a call).
    if (group.depth == 1 && !simulate) {
      CommInfo* info = comms().lookup(group.first_comm);
      CallSite site = site_for(info, "group_end");
      FaultPoint& point = group_end_point();
      if (const ArmedFault* fault = point.check(site)) {
        rc = apply_fault(FiredFault{fault, point.name(), site, info, 0}, forward, nullptr);
        fault_decided = true;
      }
    }
  });
  if (!fault_decided) rc = forward();
  // skip or error kept the call from NCCL: NCCL's group is still open, and so is ours.
  if (!forward.done()) return rc;
  if (group.depth > 0) --group.depth;
  if (group.depth == 0) {
    if (simulate) {
      group.deferred.clear();  // a simulated end launches nothing
      group.first_comm = nullptr;
    } else {
      after_outermost_group_end(group, rc);
    }
  }
  return rc;
}

ncclResult_t intercept_get_async_error(ncclComm_t comm, ncclResult_t* async_error, ForwardFn forward) {
  ReentryScope scope;
  if (scope.nested()) return forward();
  // Not a fault point: it reports what an async_error fault stored on the comm, and runs the
  // corruptions a non-blocking comm was waiting for.
  CommInfo* info = nullptr;
  // Asked only once NCCL has answered that nothing is in flight (comm_registry.h).
  guarded(report, "ncclCommGetAsyncError", [&] { info = comms().lookup(comm, /*may_query=*/false); });
  const ncclResult_t rc = forward();
  if (rc != ncclSuccess || async_error == nullptr || info == nullptr) return rc;
  if (*async_error == ncclSuccess) guarded(report, "ncclCommGetAsyncError", [&] { comms().complete(*info); });
  const int injected = info->async_error.load(std::memory_order_acquire);
  // A real error NCCL reports wins over ours; an injected one replaces success and "in progress".
  if (injected != 0 && (*async_error == ncclSuccess || *async_error == ncclInProgress)) {
    *async_error = static_cast<ncclResult_t>(injected);
  } else if (*async_error == ncclSuccess) {
    guarded(report, "corrupt (non-blocking)", [&] { flush_pending(*info); });
  }
  return rc;
}

ncclResult_t intercept_init(const InitCall& call, ForwardFn forward_fn) {
  ReentryScope scope;
  if (scope.nested()) return forward_fn();
  Forwarder forward(forward_fn);
  ncclResult_t rc = ncclSuccess;
  bool fault_decided = false;
  guarded(report, call.api, [&] {
    int rank = call.rank;
    int nranks = call.nranks;
    if (call.parent != nullptr) {
      // Split/Shrink: the new rank is not known before NCCL computes it; target the parent's.
      if (CommInfo* parent = comms().lookup(call.parent)) {
        rank = parent->rank.load();
        nranks = parent->nranks.load();
      }
    }
    FaultPoint& point = comm_init_point();
    const int base_index = comms().next_index();
    // InitAll makes one comm per device (rank i): each is one matching call; the first to fire
    // decides for the whole call, which NCCL cannot half-fail either.
    for (int i = 0; i < call.n_outputs && !fault_decided; ++i) {
      CallSite site;
      site.rank = call.n_outputs > 1 ? i : rank;
      site.world_size = call.n_outputs > 1 ? call.n_outputs : nranks;
      site.comm = base_index + i;
      site.op = "init";
      if (const ArmedFault* fault = point.check(site)) {
        rc = apply_fault(FiredFault{fault, point.name(), site, nullptr, 0}, forward, nullptr);
        fault_decided = true;
      }
    }
  });
  if (!fault_decided) rc = forward();
  if (!forward.done()) {
    // init_fail/error: NCCL never ran; leave no half-made comm for the caller to use.
    if (rc != ncclSuccess && call.outputs != nullptr) {
      for (int i = 0; i < call.n_outputs; ++i) call.outputs[i] = nullptr;
    }
    return rc;
  }
  if ((rc != ncclSuccess && rc != ncclInProgress) || call.outputs == nullptr) return rc;
  // A non-blocking init is still in flight (ncclInProgress): the entries are completed later.
  const bool settled = rc == ncclSuccess;
  guarded(report, call.api, [&] {
    for (int i = 0; i < call.n_outputs; ++i) {
      if (call.n_outputs > 1) {
        comms().add(call.outputs[i], i, call.n_outputs, call.devlist != nullptr ? call.devlist[i] : i,
                    settled);
      } else if (call.parent != nullptr) {
        comms().add(call.outputs[i], -1, -1, -1, settled);
      } else {
        comms().add(call.outputs[i], call.rank, call.nranks, -1, settled);
      }
    }
  });
  return rc;
}

ncclResult_t intercept_teardown(ncclComm_t comm, bool forget, bool fault_point, ForwardFn forward_fn) {
  ReentryScope scope;
  Forwarder forward(forward_fn);
  ncclResult_t rc = ncclSuccess;
  bool fault_decided = false;
  if (fault_point && !scope.nested()) {
    guarded(report, "ncclCommAbort", [&] {
      CommInfo* info = comms().lookup(comm, /*may_query=*/false);  // an abort may come mid-operation
      const CallSite site = site_for(info, "abort");
      FaultPoint& point = comm_abort_point();
      if (const ArmedFault* fault = point.check(site)) {
        rc = apply_fault(FiredFault{fault, point.name(), site, info, 0}, forward, nullptr);
        fault_decided = true;
      }
    });
  }
  if (!fault_decided) rc = forward();
  if (scope.nested() || !forget) return rc;
  guarded(report, "ncclCommDestroy", [&] { comms().remove(comm); });
  return rc;
}

ncclResult_t missing_symbol(const char* name) {
  if (g_mode.load(std::memory_order_acquire) == Mode::kUninitialised) initialise();
  if (g_mode.load(std::memory_order_acquire) == Mode::kActive) {
    injector().log(std::string(name) + " is not in the loaded NCCL: returning ncclInvalidUsage");
  }
  return ncclInvalidUsage;
}

}  // namespace ncclfi::preload
