// Whether `ncclfi arm`, `disarm` and `abort` may act on a run: only on a job that is running, here, as
// the user's own. A finished run's record is history (a control event written into it afterwards would
// be drawn on its timeline as if it had happened during the run), a run whose harness is gone has no one
// to tear it down, and another user's job is theirs to stop: each is refused before anything is sent or
// written. The harness leaves `harness.json` ({pid, harness_id, host}) in the run directory before the
// first launch and `verdict.json` when the run is over.
#pragma once

#include <string>

namespace ncclfi::cli {

struct RunControlState {
  enum class Kind {
    kRunning,    // the harness is alive on this host, as this user, and has not finished
    kNoRecord,   // no readable harness.json: not a run, or its job never started
    kOtherUser,  // harness.json belongs to another user
    kOtherHost,  // the harness runs on another host
    kFinished,   // verdict.json is written
    kGone,       // the harness process is gone (crashed or killed) before writing a verdict
  };
  Kind kind = Kind::kNoRecord;
  std::string why;  // for the refusal message: "runs/x/latest has finished (verdict.json written)"
  int harness_pid = 0;
  std::string harness_id;   // tags the run's processes (orphan_guard.h)
  std::string start_ticks;  // the harness's start time as the record gives it (/proc/PID/stat field 22)
};

RunControlState run_control_state(const std::string& run_dir);

// /proc/PID/stat's field 22 (the process's start time in clock ticks after boot) as text; "" when the
// process is gone. With the pid it names one process for the life of the host: a pid is reused, this pair
// is not.
std::string process_start_ticks(int pid);

// Why the live process a running run's harness.json names is not that run's harness, or "" when it is:
// the same user's, an `ncclfi` program, started when the record says, and holding the run directory's
// harness.json open (the harness keeps it open for as long as it runs: write_harness_record). A record
// edited or copied to name another process (a sleeper, another drill's harness) fails at least the last.
std::string harness_identity_problem(const std::string& run_dir, const RunControlState& state);

}  // namespace ncclfi::cli
