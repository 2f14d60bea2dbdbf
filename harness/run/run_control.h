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
  std::string harness_id;  // tags the run's processes (orphan_guard.h)
};

RunControlState run_control_state(const std::string& run_dir);

}  // namespace ncclfi::cli
