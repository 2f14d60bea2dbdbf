#include "fault_actions.h"

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <string>
#include <thread>

#include "corrupt.h"
#include "nccl_codes.h"
#include "preload_state.h"

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

uint64_t seed_of(const Fault& f) {
  if (f.params.contains("seed") && f.params["seed"].is_number_unsigned())
    return f.params["seed"].get<uint64_t>();
  return f.trigger.seed;
}

[[noreturn]] void die(const Fault& f) {
  if (f.params.contains("exit_code")) _exit(static_cast<int>(f.param_int("exit_code", 1)));
  int sig = parse_signal(f.params, SIGABRT);
  // Die by exactly this signal, whatever handlers or masks the application installed.
  std::signal(sig, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  raise(sig);
  kill(getpid(), SIGKILL);  // signals whose default is to be ignored still must end the process
  _exit(128 + sig);
}

ncclResult_t corrupt_after(const FiredFault& fired, Forwarder& forward, const OpCall& op) {
  const Fault& f = fired.fault->fault();
  ncclResult_t rc = forward();
  nlohmann::json extra = base_extra(fired);
  const CorruptMode mode = parse_corrupt_mode(f.param_string("mode", "bitflip"));
  extra["mode"] = to_string(mode);
  if (rc != ncclSuccess && rc != ncclInProgress) {
    extra["effect"] = "none: the op failed";
    record(fired, extra);
    return rc;
  }
  const size_t elements = op_result_elements(op, fired.site.rank, fired.site.world_size);
  const double draw = seeded_uniform(seed_of(f), f.id, ArmedFault::last_firing_on_this_thread());
  const CorruptionSpan span = plan_corruption(elements, datatype_size(op.datatype),
                                              static_cast<size_t>(f.param_int("count", 1)), draw);
  extra["elements"] = span.count;
  extra["first"] = span.first;
  extra["stride"] = span.stride;
  if (span.count == 0) extra["effect"] = "none: the op writes no buffer on this rank";
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
  const std::string& kind = f.kind;
  nlohmann::json extra = base_extra(fired);
  if (kind == "delay") {
    double ms = f.param_double("ms", 0.0);
    double jitter = f.param_double("jitter_ms", 0.0);
    if (jitter > 0.0)
      ms += jitter * seeded_uniform(seed_of(f), f.id, ArmedFault::last_firing_on_this_thread());
    extra["delay_ms"] = ms;
    record(fired, extra);
    std::this_thread::sleep_for(Millis(ms));
    return forward();
  }
  if (kind == "hang" || kind == "init_hang") {
    double ms = f.param_double("ms", 0.0);
    if (ms > 0.0) {
      extra["hang_ms"] = ms;
      record(fired, extra);
      std::this_thread::sleep_for(Millis(ms));
      return forward();
    }
    extra["forever"] = true;
    record(fired, extra);
    hang_forever();
  }
  if (kind == "skip") {
    record(fired, extra);
    return ncclSuccess;
  }
  if (kind == "error" || kind == "init_fail") {
    ncclResult_t code = parse_nccl_code(f.params, kind == "error" ? ncclInternalError : ncclSystemError);
    extra["code"] = static_cast<int>(code);
    record(fired, extra);
    return code;
  }
  if (kind == "async_error") {
    ncclResult_t code = parse_nccl_code(f.params, ncclRemoteError);
    extra["code"] = static_cast<int>(code);
    if (fired.comm != nullptr) {
      fired.comm->async_error.store(static_cast<int>(code), std::memory_order_release);
    } else {
      extra["effect"] = "none: the call has no communicator";
    }
    record(fired, extra);
    return forward();
  }
  if (kind == "corrupt") {
    if (op != nullptr) return corrupt_after(fired, forward, *op);
    extra["effect"] = "none: not an op with a receive buffer";
    record(fired, extra);
    return forward();
  }
  if (kind == "crash") {
    if (f.params.contains("exit_code")) {
      extra["exit_code"] = f.param_int("exit_code", 1);
    } else {
      extra["signal"] = parse_signal(f.params, SIGABRT);
    }
    record(fired, extra);
    die(f);
  }
  // A kind this front end does not know (the plan parser should have refused it): let the call through.
  extra["effect"] = "none: unknown kind";
  record(fired, extra);
  return forward();
}

}  // namespace ncclfi::preload
