// Helpers shared by the outcome rules and the checkers (not part of the public API).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "history.h"

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

// "1,3" for the ranks {1, 3}; "none" for no rank (check reasons and evidence text).
template <typename Ranks>
std::string ranks_text(const Ranks& ranks) {
  std::string s;
  for (int r : ranks) s += (s.empty() ? "" : ",") + std::to_string(r);
  return s.empty() ? std::string("none") : s;
}

// Ranks (>= 0) with a detection by a mechanism other than harness_deadline.
std::set<int> ranks_that_detected(const History& history);

// An inject event whose fault had an effect (not `"effect": "none: ..."`).
bool is_inject(const HistoryEvent& e);

// When the harness hit its deadline: the moment its teardown began (the harness "deadline" event of
// the last attempt, else its first kill of that attempt). Unset when no deadline was hit.
std::optional<int64_t> teardown_start_ns(const History& history);

// A detection that counts for the outcome and the checks: the harness_deadline itself, or anything
// noticed before the deadline teardown began. A watchdog that fires only because the teardown's
// SIGCONT/SIGTERM woke a frozen rank did not detect the fault.
bool counts(const Detection& d, std::optional<int64_t> teardown_ns);

}  // namespace ncclfi::harness::detail
