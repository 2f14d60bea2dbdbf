// What the parts of ncclfi-cpu-ring share: its options, the workload contract's ways to end (an abort
// event, then the exit code), and the op bookkeeping that the watchdog reads and the op events record.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "ncclfi/event_log.h"
#include "ring_allreduce.h"

namespace ncclfi::cpu_ring {

struct Options {
  std::string plugin;
  std::string bytes_text = "1M";
  uint64_t bytes = 1 << 20;
  int iters = 20;
  int warmup = 2;
  double timeout_s = 0;
  bool check = false;
  // allreduce: the checked ring all-reduce; train: a small data-parallel training loop (float gradients
  // all-reduced, Adam, a loss printed per step); linktest: each ring link alone, one way, timed and
  // checked (what an operator runs to verify links).
  std::string mode = "allreduce";
  double lr = 0.05;
};

// Writes the abort event and exits at once with `code`: peers and helper threads may be blocked, and
// nothing is left to unwind safely.
// What the workload calls itself in what it prints: "ncclfi-cpu-ring", or "cpu-ring" under NCCLFI_QUIET
// (training labs and drills), where a rank's output must not name ncclfi.
const char* program_tag();
[[noreturn]] void die(const EventLog& events, int code, const std::string& reason);
// A net plugin call failed: the nccl_error event, then die() with the code and its name.
[[noreturn]] void plugin_failed(const EventLog& events, const PluginError& error);

// Shared between the ring loop and the watchdog.
struct OpState {
  std::atomic<int64_t> seq{-1};
  std::atomic<int64_t> start_mono_ns{0};
  std::atomic<bool> in_op{false};
  std::atomic<bool> stop{false};
  RingProgress ring;  // the all-reduce's step (RingLinks::progress points here)
};

// Aborts the job (exit 3) when an op has run longer than `timeout_s`; returns when state.stop is set. Its
// line says how long the op really waited (more than the timeout when the process itself was stopped)
// and where in the ring it waited:
//   watchdog: allreduce seq 8 did not complete within 3.000000 s (waited 3.004 s; ring step 2 of 6 waits
//   to receive from rank 0)
void watchdog(const OpState& state, const EventLog& events, double timeout_s, int rank, int world_size);

// Marks each op's start and end for the watchdog and writes its op event.
class OpRecorder {
 public:
  OpRecorder(OpState& state, const EventLog& events, const Options& opt, size_t count)
      : state_(state), events_(events), opt_(opt), count_(count) {}
  void begin(int seq);
  // Writes the op event (with `extra`'s fields); returns the op's duration in microseconds.
  int64_t end(int seq, std::chrono::steady_clock::time_point start, const nlohmann::json& extra);
  // Ends the job on a failed transfer of the op in progress: with the watchdog's line when the op was
  // already past its timeout (the process was stopped), else with the plugin's error.
  [[noreturn]] void failed(const RingLinks& links, const PluginError& error);

 private:
  OpState& state_;
  const EventLog& events_;
  const Options& opt_;
  size_t count_;  // elements of uint32_t per op
};

}  // namespace ncclfi::cpu_ring
