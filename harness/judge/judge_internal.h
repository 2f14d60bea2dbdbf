// Helpers shared by the outcome rules and the checkers (not part of the public API).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "history.h"
#include "text_format.h"

namespace ncclfi::harness::detail {

// The attempt the run ended with (the largest attempt seen in exits, events, or attempts - 1).
int last_attempt(const History& history);

// Restarts torchrun made by itself: the larger of what its log lines announced and what the workers
// said at start (ddp_train.py's `restart_count`, from TORCHELASTIC_RESTART_COUNT), summed over the
// harness's attempts. Recent torchrun versions log the restart line only at INFO level.
int torchrun_restarts(const History& history);

// Every rank of `attempt` exited 0 (none signalled, none killed), and the harness neither hit its
// deadline nor was interrupted. When no exits are recorded, every rank has a `done` event instead.
bool finished(const History& history, int attempt);

// Evidence of wrong data in `attempt`: result_mismatch, nan_detected or done{verified:false}.
// Returns the first such event's description, or "".
std::string corruption_evidence(const History& history, int attempt);

// Ranks (>= 0) with a detection that counts (DetectionWindow) by a mechanism other than harness_deadline.
std::set<int> ranks_that_detected(const History& history);

// An inject event whose fault had an effect (not `"effect": "none: ..."`).
bool is_inject(const HistoryEvent& e);

// When the harness hit its deadline: the moment its teardown began (the harness "deadline" event of
// the last attempt, else its first kill of that attempt). Unset when no deadline was hit.
std::optional<int64_t> teardown_start_ns(const History& history);

// The first inject event that had an effect (is_inject), wall clock; unset when the run injected nothing.
std::optional<int64_t> first_injection_ns(const History& history);

// Which detections are the fault's, for the outcome and every check. Those before the first injection
// came before the fault: the job was failing on its own, and they are reported as such ("before the
// fault"), never as the fault's detection. Of the rest, the harness_deadline itself, or anything noticed
// before the deadline teardown began: a watchdog that fires only because the teardown's SIGCONT/SIGTERM
// woke a frozen rank did not detect the fault. Without an injection (a run with no faults) every
// detection before the teardown counts.
struct DetectionWindow {
  std::optional<int64_t> first_injection_ns;
  std::optional<int64_t> teardown_ns;
  bool before_the_fault(const Detection& d) const;
  bool counts(const Detection& d) const;
};
DetectionWindow detection_window(const History& history);

// "watchdog on rank 1, api_error on rank 0" for the detections before the fault ("" when none).
std::string detections_before_the_fault(const History& history, const DetectionWindow& window);
// The log's evidence lines that point to a fault site ("srun.task_ended on rank 1 (dead_rank)"), at most
// three, for an outcome that no mechanism explains.
std::string evidence_with_sites(const History& history);

// In-place recovery (ncclfi-workload --recover shrink) in the final attempt, as the ranks' events and
// the exit statuses show it. Present when some rank of that attempt wrote a `recovered` event.
struct InPlaceRecovery {
  std::set<int> survivors;  // ranks that wrote `recovered`
  std::set<int> victims;    // ranks of the attempt without `recovered`: the ones the fault took
  // Seconds from the first injection (the harness's record) to the last survivor's first step after
  // its recovery (`resumed`): the job has resumed once every survivor has. Unset when one never did.
  std::optional<double> resume_s;
  std::string problem;  // why this is not recovered_in_place ("" when it is)
  // How the survivors got their communicator, as their `recovered` events say: "shrink" (ncclCommShrink),
  // "reinit" (a new one of the survivors) or both joined with "+" when they differ; "" when unsaid.
  std::string method;
};
std::optional<InPlaceRecovery> in_place_recovery(const History& history);

}  // namespace ncclfi::harness::detail
