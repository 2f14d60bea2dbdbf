// Stopping a drill at once: `ncclfi abort RUN_DIR`, and Ctrl-C on the harness. Both stop every injection
// first (every fault disarmed in every live rank through the control FIFOs that `arm`/`disarm` use, the
// harness's proc faults cancelled and stopped ranks continued) and then tear the job down.
//
// `ncclfi abort` runs beside the harness: it disarms, records a `control` event (action "abort") and
// leaves an abort request in the run directory (`abort-requested`), which the harness's attempt loop
// polls every tick; the harness then tears the job down and launches nothing more (the run ends like an
// interrupted one: a partial verdict, exit 3). A run that is not running here as the user's own (finished,
// another user's or host's: run_control.h) is refused, and nothing is written into it; where its harness
// died without a verdict, the command kills the run's leftover processes itself (by the harness id in
// `harness.json`), and is refused when there are none.
#pragma once

#include <ostream>
#include <string>

#include "ncclfi/injector.h"
#include "ncclfi/plan.h"

namespace ncclfi::cli {

// Written by the harness into each run directory before the first launch: {pid, harness_id, host}.
void write_harness_record(const std::string& run_dir);
// The abort request's path in a run directory.
std::string abort_request_path(const std::string& run_dir);
// Sets interrupted() when the run directory holds an abort request (a stat; polled every tick).
bool poll_abort_request(const std::string& run_dir);

// Disarms every fault of `plan` in every live rank of `run_dir` (their control FIFOs); the answers summed.
ControlResult disarm_all(const std::string& run_dir, const FaultPlan& plan, int timeout_ms);

// `ncclfi abort RUN_DIR`: returns the exit status (0 the job is down, 1 not confirmed within timeout_s,
// 2 not a run directory, or not a running job of this user on this host). Progress and the outcome go to
// `out`.
int abort_run(const std::string& run_dir, double timeout_s, std::ostream& out);

}  // namespace ncclfi::cli
