// proc-layer faults, applied by the harness itself (DESIGN.md fault model): `stop` SIGSTOPs the rank
// and SIGCONTs it after `ms` (never when absent or 0); `kill` sends `signal` (default SIGKILL).
// `after_ms` counts from the attempt's launch. Faults that start disarmed are left to `ncclfi arm`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ncclfi/plan.h"
#include "scenario.h"

namespace ncclfi::cli {

// What the schedule needs from the running attempt.
class RankSignaller {
 public:
  virtual ~RankSignaller() = default;
  // Sends `sig` to `rank`'s processes; returns how many were signalled.
  virtual int signal_rank(int rank, int sig) = 0;
  virtual void record_injection(const Fault& fault, int rank, const std::string& action, int sig) = 0;
};

// A signal given as a number or a name ("SIGKILL", "KILL", "9"); -1 when unknown.
int parse_signal(const nlohmann::json& value);

class ProcFaultSchedule {
 public:
  ProcFaultSchedule() = default;
  ProcFaultSchedule(const Scenario& scenario, int64_t launch_ns);
  // Applies every action due at `now_ns`.
  void fire_due(int64_t now_ns, RankSignaller& target);
  // SIGCONTs ranks still stopped (the attempt ends: healing before the final checks).
  void release_stopped(RankSignaller& target);
  size_t pending() const { return actions_.size(); }

 private:
  struct Action {
    int64_t due_ns;
    int rank;
    Fault fault;
    bool resume;  // SIGCONT after a stop
  };
  std::vector<Action> actions_;
  std::vector<int> stopped_ranks_;
};

}  // namespace ncclfi::cli
