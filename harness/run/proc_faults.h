// proc-layer faults, applied by the harness itself: each carries its ProcAction, resolved by the core
// when the plan was parsed (this file never reads parameter JSON). StopProcess SIGSTOPs the rank and
// SIGCONTs it after `resume_after_ms` (never when unset); KillProcess sends its signal.
// `after_ms` counts from the rank's launch: the moment the harness first sees that rank's process. For a
// rank the harness spawns itself that is the spawn; under srun, mpirun or torchrun it is when the task
// appears, which on a loaded host or a busy cluster can be seconds after the launcher started, and a
// fault timed from the launcher would then hit a rank still in its bootstrap instead of one in its
// training loop. Faults that start disarmed are left to `ncclfi arm`. A fault with windows acts once per
// window: window k opens (k-1) * every_s after the first, a stop is continued when its window closes
// (duration_s), and a kill of a rank that is not running (not yet restarted) waits until one is.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent_protocol.h"
#include "ncclfi/event_log.h"
#include "ncclfi/plan.h"
#include "scenario.h"

namespace ncclfi::cli {

// What the schedule needs from the running attempt.
class RankSignaller {
 public:
  virtual ~RankSignaller() = default;
  // Sends `sig` to `rank`'s processes; returns how many were signalled. `sent`, when given, gets the
  // time just before the first signal went out: the injection's time, which the ranks' reactions must
  // follow however long the harness then takes to log it.
  // kSignalRefused: the rank's host refused (outside the drill's allow-list, said by its agent): the
  // fault is not retried and no injection is recorded.
  virtual int signal_rank(int rank, int sig, EventTime* sent = nullptr) = 0;
  // The ranks whose process is running now (spawned by the harness, or found by the run's harness id).
  virtual std::set<int> running_ranks() = 0;
  virtual void record_injection(const Fault& fault, int rank, const std::string& action, int sig,
                                EventTime at) = 0;
  // The same for a fault with windows (trigger.every_s/times/duration_s): `window` is 1-based.
  virtual void record_injection_in_window(const Fault& fault, int rank, const std::string& action, int sig,
                                          EventTime at, uint64_t /*window*/) {
    record_injection(fault, rank, action, sig, at);
  }
  // A stopped rank was continued: the fault's window `window` (1-based) closed.
  virtual void record_heal(const Fault& /*fault*/, int /*rank*/, uint64_t /*window*/, EventTime /*at*/) {}
};

class ProcFaultSchedule {
 public:
  ProcFaultSchedule() = default;
  explicit ProcFaultSchedule(const Scenario& scenario);
  // Starts the clock of every rank that is now running, then applies every action due at `now_ns`.
  void fire_due(int64_t now_ns, RankSignaller& target);
  // SIGCONTs ranks still stopped (the attempt ends: healing before the final checks).
  void release_stopped(RankSignaller& target);
  size_t pending() const { return actions_.size(); }

 private:
  // How often ranks not yet seen are looked for. Under a launcher that reads every process's
  // environment, which on a node with thousands of processes costs milliseconds: a rank's clock may
  // start up to this much after its process did.
  static constexpr int64_t kLaunchPollNs = 50'000'000;

  struct Action {
    std::optional<int64_t> due_ns;  // unset until the rank's launch has been seen
    int rank;
    Fault fault;
    bool resume;                  // SIGCONT after a stop
    uint64_t window = 0;          // 0-based window of a fault with windows (fault_window.h)
    int64_t first_window_ns = 0;  // when its first window opened (the launch + after_ms)
  };
  std::vector<Action> actions_;
  std::vector<int> stopped_ranks_;
  int64_t next_launch_poll_ns_ = 0;
};

}  // namespace ncclfi::cli
