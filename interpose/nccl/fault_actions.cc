#include "fault_actions.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <stdexcept>
#include <string>
#include <thread>

#include "bandwidth_cap.h"
#include "corrupt.h"
#include "gpu_hang.h"
#include "ncclfi/effects.h"
#include "ncclfi_interpose/nccl_result.h"
#include "preload_state.h"
#include "topology_fault.h"

namespace ncclfi::preload {
namespace {

using Millis = std::chrono::duration<double, std::milli>;

nlohmann::json base_extra(const FiredFault& fired) {
  nlohmann::json extra = nlohmann::json::object();
  if (fired.seq != 0) extra["seq"] = fired.seq;
  if (fired.site.world_size > 0) extra["nranks"] = fired.site.world_size;
  if (group_state().depth > 0) extra["in_group"] = true;
  return extra;
}

void record(const FiredFault& fired, nlohmann::json extra) {
  injector().record_injection(*fired.fault, fired.point, fired.site, extra);
}

// Dies by exactly this signal, whatever handlers or masks the application installed. The core accepts
// only signals whose default action ends the process, so raise() does not return.
[[noreturn]] void die_by(int sig) {
  std::signal(sig, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  raise(sig);
  _exit(128 + sig);  // not reached
}

ncclResult_t corrupt_after(const FiredFault& fired, Forwarder& forward, const OpCall& op,
                           const CorruptElements& corrupt) {
  const Fault& f = fired.fault->fault();
  ncclResult_t rc = forward();
  nlohmann::json extra = base_extra(fired);
  const CorruptMode mode = corrupt.mode;
  extra["mode"] = to_string(mode);
  if (rc != ncclSuccess && rc != ncclInProgress) {
    mark_no_effect(extra, no_effect::kOpFailed);
    record(fired, extra);
    return rc;
  }
  const size_t elements = op_result_elements(op, fired.site.rank, fired.site.world_size);
  const double draw = corrupt_draw(
      corrupt_seed(corrupt.seed, fired.fault->seed(), f.id, ArmedFault::last_firing_on_this_thread()));
  const CorruptionSpan span = plan_corruption(elements, datatype_size(op.datatype), corrupt.count, draw);
  extra["elements"] = span.count;
  extra["first"] = span.first;
  extra["stride"] = span.stride;
  if (span.count == 0) mark_no_effect(extra, no_effect::kNoBufferOnThisRank);
  const int device = fired.comm != nullptr ? fired.comm->device.load() : -1;
  auto enqueue = [buf = op.recvbuff, dt = op.datatype, span, mode, stream = op.stream, device]() {
    std::string error = enqueue_corruption(buf, dt, span, mode, stream, device);
    if (!error.empty()) injector().log("corrupt not applied: " + error);
  };
  GroupState& group = group_state();
  if (span.count == 0) {
    // nothing to alter
  } else if (rc == ncclInProgress && fired.comm != nullptr) {
    // A non-blocking comm enqueues later: wait until ncclCommGetAsyncError says it is done.
    extra["deferred"] = "nonblocking";
    std::lock_guard lock(fired.comm->pending_mu);
    fired.comm->pending.emplace_back(enqueue);
  } else if (group.depth > 0) {
    // Inside a group nothing is launched until the outermost ncclGroupEnd.
    extra["deferred"] = "group_end";
    group.deferred.emplace_back(fired.comm, enqueue);
  } else {
    enqueue();
  }
  record(fired, extra);
  return rc;
}

// A line as NCCL's own WARN prints it ("host:pid:tid [dev] NCCL WARN ..."), so a fault that imitates a
// failure NCCL reports leaves the line an operator would find.
void warn_as_nccl(const std::string& text, int device) {
  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  std::fprintf(stderr, "%s:%d:%ld [%d] NCCL WARN %s\n", host, static_cast<int>(getpid()),
               static_cast<long>(syscall(SYS_gettid)), device < 0 ? 0 : device, text.c_str());
  std::fflush(stderr);
}

ncclResult_t cap_bandwidth(const FiredFault& fired, Forwarder& forward, const OpCall& op,
                           const BandwidthCap& cap, nlohmann::json& extra) {
  const double seconds = op_bus_bytes(op, fired.site.world_size) / (cap.gb_per_s * 1e9);
  const int device = fired.comm != nullptr ? fired.comm->device.load() : -1;
  extra["gb_per_s"] = cap.gb_per_s;
  extra["hold_ms_at_most"] = seconds * 1e3;
  GroupState& group = group_state();
  if (group.depth > 0) {
    // Launched at the outermost ncclGroupEnd: hold the stream for the whole time after it.
    extra["deferred"] = "group_end";
    group.deferred.emplace_back(fired.comm, [stream = op.stream, device, seconds] {
      BandwidthHold hold(stream, device, seconds);
      if (std::string why = hold.hold_after(); !why.empty())
        injector().log("bandwidth_cap not applied: " + why);
    });
    record(fired, extra);
    return forward();
  }
  BandwidthHold hold(op.stream, device, seconds);
  const std::string no_mark = hold.mark_start();
  const ncclResult_t rc = forward();
  std::string why;
  if (rc == ncclSuccess || rc == ncclInProgress) why = hold.hold_after();
  if (!no_mark.empty() || !why.empty()) mark_no_effect(extra, why.empty() ? no_mark : why);
  record(fired, extra);
  return rc;
}

// One function per action: each records the injection (before an effect that may never return) and
// returns what the wrapper returns.

ncclResult_t hold_call(const FiredFault& fired, Forwarder& forward, const Delay& delay,
                       nlohmann::json& extra) {
  const ArmedFault& armed = *fired.fault;
  const double ms = delay.draw(armed.seed(), armed.fault().id, ArmedFault::last_firing_on_this_thread());
  extra["delay_ms"] = ms;
  record(fired, extra);
  std::this_thread::sleep_for(Millis(ms));
  return forward();
}

ncclResult_t hang_call(const FiredFault& fired, Forwarder& forward, const Hang& hang, nlohmann::json& extra) {
  if (hang.ms) {
    extra["hang_ms"] = *hang.ms;
    record(fired, extra);
    std::this_thread::sleep_for(Millis(*hang.ms));
    return forward();
  }
  extra["forever"] = true;
  record(fired, extra);
  hang_forever();
}

ncclResult_t hang_stream(const FiredFault& fired, Forwarder& forward, const OpCall* op, const GpuHang& hang,
                         nlohmann::json& extra) {
  // Enqueued now, before NCCL has the op. In a group (launched at the outermost ncclGroupEnd) or on a
  // non-blocking comm (launched by NCCL later) the op's work reaches this stream later still, so the wait
  // is ahead of it there too.
  const int device = fired.comm != nullptr ? fired.comm->device.load() : -1;
  const std::string why =
      op != nullptr ? enqueue_gpu_hang(op->stream, device, hang.ms) : std::string(no_effect::kNoStream);
  if (!why.empty()) {
    mark_no_effect(extra, why);
  } else if (hang.ms) {
    extra["gpu_hang_ms"] = *hang.ms;
  } else {
    extra["forever"] = true;
  }
  record(fired, extra);
  return forward();
}

ncclResult_t fail_call(const FiredFault& fired, const FailWithCode& fail, nlohmann::json& extra) {
  const ncclResult_t code = to_nccl_result(fail.code);
  extra["code"] = static_cast<int>(code);
  record(fired, extra);
  return code;
}

ncclResult_t mark_async_error(const FiredFault& fired, Forwarder& forward, const AsyncError& async,
                              nlohmann::json& extra) {
  const ncclResult_t code = to_nccl_result(async.code);
  extra["code"] = static_cast<int>(code);
  if (!async.warn.empty()) warn_as_nccl(async.warn, fired.comm != nullptr ? fired.comm->device.load() : -1);
  if (fired.comm != nullptr) {
    fired.comm->async_error.store(static_cast<int>(code), std::memory_order_release);
  } else {
    mark_no_effect(extra, no_effect::kNoCommunicator);
  }
  record(fired, extra);
  return forward();
}

// An effect that needs an op (its buffer or its stream) on a call that is none: recorded as changing
// nothing, and the call goes on.
ncclResult_t not_an_op(const FiredFault& fired, Forwarder& forward, std::string_view why,
                       nlohmann::json& extra) {
  mark_no_effect(extra, why);
  record(fired, extra);
  return forward();
}

ncclResult_t change_topology(const FiredFault& fired, Forwarder& forward, const TopologyChange& change,
                             nlohmann::json& extra) {
  const std::string why = apply_topology_change(change, injector().params().run_dir, fired.site.rank, extra);
  if (!why.empty()) mark_no_effect(extra, why);
  record(fired, extra);
  return forward();
}

}  // namespace

[[noreturn]] void hang_forever() {
  for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
}

void flush_pending(CommInfo& comm) {
  std::vector<std::function<void()>> ready;
  {
    std::lock_guard lock(comm.pending_mu);
    ready.swap(comm.pending);
  }
  for (auto& job : ready) job();
}

ncclResult_t apply_fault(const FiredFault& fired, Forwarder& forward, const OpCall* op) {
  const Fault& f = fired.fault->fault();
  const ApiAction* action = f.api_action();
  if (action == nullptr) throw std::logic_error("fault " + f.id + " is not an api fault");
  nlohmann::json extra = base_extra(fired);
  // One case per action: a new api action that is not carried out here does not compile.
  return std::visit(
      Overloaded{
          [&](const Delay& delay) { return hold_call(fired, forward, delay, extra); },
          [&](const Hang& hang) { return hang_call(fired, forward, hang, extra); },
          [&](const GpuHang& hang) { return hang_stream(fired, forward, op, hang, extra); },
          [&](const Skip&) {
            record(fired, extra);
            return ncclSuccess;
          },
          [&](const FailWithCode& fail) { return fail_call(fired, fail, extra); },
          [&](const AsyncError& async) { return mark_async_error(fired, forward, async, extra); },
          [&](const CorruptElements& corrupt) {
            return op != nullptr ? corrupt_after(fired, forward, *op, corrupt)
                                 : not_an_op(fired, forward, no_effect::kNoReceiveBuffer, extra);
          },
          [&](const DieBySignal& die) -> ncclResult_t {
            extra["signal"] = die.signal;
            record(fired, extra);
            die_by(die.signal);
          },
          [&](const ExitWithCode& exit) -> ncclResult_t {
            extra["exit_code"] = exit.code;
            record(fired, extra);
            _exit(exit.code);
          },
          [&](const BandwidthCap& cap) {
            return op != nullptr ? cap_bandwidth(fired, forward, *op, cap, extra)
                                 : not_an_op(fired, forward, no_effect::kNoStream, extra);
          },
          [&](const TopologyChange& change) { return change_topology(fired, forward, change, extra); },
          // Its points are connect()'s (bootstrap_connect.cc), never an NCCL call's.
          [&](const RefuseConnect&) { return not_an_op(fired, forward, no_effect::kNotAConnection, extra); },
      },
      *action);
}

}  // namespace ncclfi::preload
