// The cpu-ring job's ends and op bookkeeping (ring_job.h).
#include "ring_job.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <thread>

#include "ncclfi/nccl_results.h"
#include "ncclfi/params.h"
#include "ncclfi/workload_contract.h"

namespace ncclfi::cpu_ring {

const char* program_tag() {
  return Params::get().quiet ? "cpu-ring" : "ncclfi-cpu-ring";
}

namespace {

// The watchdog thread and the ring loop may both end the job at once (a stopped process resumed): the
// first thread to claim the end writes its events, its line and its exit code; any other waits for the
// exit. Claimed before any event is written, so the record holds one ending.
void claim_the_end() {
  static std::atomic<bool> ending{false};
  thread_local bool mine = false;
  if (mine) return;
  if (ending.exchange(true)) {
    for (;;) pause();
  }
  mine = true;
}

}  // namespace

void die(const EventLog& events, int code, const std::string& reason) {
  claim_the_end();
  events.write(ev::kAbort, {{"reason", reason}, {"exit_code", code}});
  std::fprintf(stderr, "%s: %s\n", program_tag(), reason.c_str());
  std::fflush(stderr);
  _exit(code);  // peers and helper threads may be blocked; nothing left to unwind safely
}

void plugin_failed(const EventLog& events, const PluginError& error) {
  claim_the_end();
  events.write(ev::kNcclError, {{"code", static_cast<int>(error.code)}, {"where", error.where}});
  // The code and its name, as NCCL's own error messages give them.
  std::string name = "ncclResult_t " + std::to_string(static_cast<int>(error.code));
  if (const auto code = nccl_error_from_int(static_cast<int>(error.code))) {
    name = std::string(name_of(*code));
  }
  die(events, kExitNcclError,
      "net plugin call " + error.where + " failed with ncclResult_t " +
          std::to_string(static_cast<int>(error.code)) + " (" + name + ")");
}

namespace {

// "; ring step 2 of 6 waits to receive from rank 0" while an all-reduce is in a step, else "".
std::string ring_position(const RingProgress& ring, int rank, int world_size) {
  const int step = ring.step.load();
  if (step < 0 || world_size < 2) return "";
  const bool recv = ring.recv_open.load(), send = ring.send_open.load();
  std::string waits;
  if (recv) waits = "to receive from rank " + std::to_string((rank + world_size - 1) % world_size);
  if (send)
    waits += std::string(recv ? " and " : "") + "to send to rank " + std::to_string((rank + 1) % world_size);
  if (waits.empty()) waits = "on its own reduction";
  return "; ring step " + std::to_string(step + 1) + " of " + std::to_string(ring.steps.load()) + " waits " +
         waits;
}

// Ends the job with the watchdog's line when the op in progress has waited longer than its timeout.
void fire_if_overdue(const OpState& state, const EventLog& events, double timeout_s, int rank,
                     int world_size) {
  if (timeout_s <= 0 || !state.in_op.load()) return;
  const int64_t waited = Clock::mono_ns() - state.start_mono_ns.load();
  if (waited <= static_cast<int64_t>(timeout_s * 1e9)) return;
  claim_the_end();
  events.write(ev::kWatchdogFired, {{"op", "allreduce"},
                                    {"seq", state.seq.load()},
                                    {"waited_ms", waited / 1000000},
                                    {"reason", "timeout"},
                                    {"timeout_ms", static_cast<int64_t>(timeout_s * 1000)}});
  char waited_s[32];
  std::snprintf(waited_s, sizeof(waited_s), "%.3f", static_cast<double>(waited) / 1e9);
  die(events, kExitWatchdog,
      "watchdog: allreduce seq " + std::to_string(state.seq.load()) + " did not complete within " +
          std::to_string(timeout_s) + " s (waited " + waited_s + " s" +
          ring_position(state.ring, rank, world_size) + ")");
}

}  // namespace

void watchdog(const OpState& state, const EventLog& events, double timeout_s, int rank, int world_size) {
  while (!state.stop.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    fire_if_overdue(state, events, timeout_s, rank, world_size);
  }
}

void OpRecorder::failed(const RingLinks& links, const PluginError& error) {
  // A process stopped past its op's deadline (SIGSTOP, a host that stopped scheduling it) runs its
  // watchdog thread and its failing call together when it resumes, and its peers have given up on it by
  // then; PyTorch's watchdog thread reports the timed-out work in that case too. The timeout is what
  // happened first, so its line goes first, with how long the op really waited.
  fire_if_overdue(state_, events_, opt_.timeout_s, links.rank, links.world_size);
  plugin_failed(events_, error);
}

void OpRecorder::begin(int seq) {
  state_.seq.store(seq);
  state_.start_mono_ns.store(Clock::mono_ns());
  state_.in_op.store(true);
}

int64_t OpRecorder::end(int seq, std::chrono::steady_clock::time_point start, const nlohmann::json& extra) {
  const auto dur_us =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count();
  state_.in_op.store(false);
  nlohmann::json fields = {{"seq", seq},
                           {"op", opt_.mode == "linktest" ? "sendrecv" : "allreduce"},
                           {"bytes", count_ * sizeof(uint32_t)},
                           {"dur_us", dur_us},
                           {"warmup", seq < opt_.warmup}};
  for (const auto& [k, v] : extra.items()) fields[k] = v;
  events_.write(ev::kOp, fields);
  return dur_us;
}

}  // namespace ncclfi::cpu_ring
