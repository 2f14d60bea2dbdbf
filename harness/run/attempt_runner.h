// One attempt of a scenario: launch every process, apply the harness-side (proc) faults on time,
// follow the output and the event log into the History as they appear, enforce the deadline, and
// tear everything down (SIGTERM to every process group, grace, SIGKILL) on deadline or interrupt.
// The loop (attempt_runner.cc) drives its parts: the processes it starts (job_processes.h), the node
// agents of a job across hosts (node_agents.h) and what it observes (attempt_observation.h). Every
// duration it measures is on the monotonic clock (attempt_clock.h).
#pragma once

#include <functional>
#include <string>

#include "attempt_clock.h"
#include "history.h"
#include "host_env.h"
#include "launch_context.h"
#include "launcher_spec.h"
#include "observe.h"
#include "progress.h"
#include "rank_process.h"

namespace ncclfi::cli {

struct AttemptResult {
  bool deadline_hit = false;
  bool interrupted = false;
  bool failed = false;               // a process ended with a nonzero code or a signal, or the deadline hit
  int64_t start_ns = 0, end_ns = 0;  // wall clock, for the reports
  long events_end_offset = 0;        // events.jsonl read up to here
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
