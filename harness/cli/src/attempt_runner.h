// One attempt of a scenario: launch every process, apply the harness-side (proc) faults on time,
// follow the output and the event log into the History as they appear, enforce the deadline, and
// tear everything down (SIGTERM to every process group, grace, SIGKILL) on deadline or interrupt.
//
// Every duration the loop measures (the deadline, the grace period, proc-fault timers, the RAS probe's
// moment, progress ticks) is on the monotonic clock: a wall clock stepped by NTP or by hand must not end
// an attempt early or keep it past its deadline. The wall clock only stamps what a person reads.
#pragma once

#include <functional>
#include <string>

#include "history.h"
#include "ncclfi/event_log.h"
#include "observe.h"
#include "rank_launcher.h"
#include "reports.h"

namespace ncclfi::cli {

struct AttemptResult {
  bool deadline_hit = false;
  bool interrupted = false;
  bool failed = false;               // a process ended with a nonzero code or a signal, or the deadline hit
  int64_t start_ns = 0, end_ns = 0;  // wall clock, for the reports
  long events_end_offset = 0;        // events.jsonl read up to here
};

// Where the attempt loop reads the time. The default reads the system's clocks; tests give one whose
// wall clock jumps, to prove that no deadline follows it.
class AttemptClock {
 public:
  virtual ~AttemptClock() = default;
  virtual EventTime now() const { return EventTime::now(); }
  static const AttemptClock& system();
};

using ProgressCallback = std::function<void(const harness::ProgressState&)>;

struct AttemptInputs {
  LaunchContext ctx;  // filled for this attempt (log_dir created by the runner)
  const RankLauncher* launcher = nullptr;
  const harness::LogClassifier* classifier = nullptr;
  std::string log_dir_rel;               // log_dir relative to the run directory (for History)
  long events_offset = 0;                // where this attempt's events start in events.jsonl
  ProgressCallback progress;             // may be empty
  harness::ProgressState progress_base;  // index, total, scenario, phase
  const AttemptClock* clock = nullptr;   // null: AttemptClock::system()
};

// Runs the attempt, appending to `history` (events, detections, exits, rank_logs[attempt]).
// Throws std::runtime_error when a process cannot be started (after tearing down those that were).
AttemptResult run_attempt(const AttemptInputs& in, harness::History& history);

}  // namespace ncclfi::cli
