#include "proc_faults.h"

#include <signal.h>

#include <algorithm>
#include <optional>

#include "ncclfi/fault_window.h"

namespace ncclfi::cli {

namespace {

// What a proc action does when it is due: the signal sent, the action's name for the event and, for a
// stop, when to send SIGCONT. One case per action: a new proc action that is not handled here does not
// compile.
struct Step {
  int signal;
  const char* name;
  bool stops;
  std::optional<double> resume_after_ms;
};

Step step_of(const ProcAction& action) {
  return std::visit(Overloaded{
                        [](const StopProcess& stop) {
                          return Step{SIGSTOP, "stop", true, stop.resume_after_ms};
                        },
                        [](const KillProcess& kill) {
                          return Step{kill.signal, "kill", false, std::nullopt};
                        },
                    },
                    action);
}

}  // namespace

ProcFaultSchedule::ProcFaultSchedule(const Scenario& scenario) {
  for (const Fault& f : scenario.plan.faults) {
    if (f.proc_action() == nullptr || !f.trigger.armed) continue;
    for (int rank : f.target.resolve_ranks(scenario.workload.ranks)) {
      actions_.push_back({std::nullopt, rank, f, false});
    }
  }
}

void ProcFaultSchedule::fire_due(int64_t now_ns, RankSignaller& target) {
  const bool waiting_for_launch =
      std::any_of(actions_.begin(), actions_.end(), [](const Action& a) { return !a.due_ns; });
  if (waiting_for_launch && now_ns >= next_launch_poll_ns_) {
    next_launch_poll_ns_ = now_ns + kLaunchPollNs;
    const std::set<int> running = target.running_ranks();
    for (auto& a : actions_) {
      if (!a.due_ns && running.count(a.rank) > 0) {
        a.due_ns = now_ns + static_cast<int64_t>(a.fault.trigger.after_ms) * 1'000'000;
        a.first_window_ns = *a.due_ns;
      }
    }
  }
  std::vector<Action> later;
  for (auto& a : actions_) {
    if (!a.due_ns || *a.due_ns > now_ns) {
      later.push_back(std::move(a));
      continue;
    }
    if (a.resume) {
      EventTime sent;
      target.signal_rank(a.rank, SIGCONT, &sent);
      target.record_heal(a.fault, a.rank, a.fault.trigger.windowed() ? a.window + 1 : 0, sent);
      stopped_ranks_.erase(std::remove(stopped_ranks_.begin(), stopped_ranks_.end(), a.rank),
                           stopped_ranks_.end());
      continue;
    }
    const ProcAction* action = a.fault.proc_action();
    if (action == nullptr) continue;  // only proc faults are scheduled (constructor)
    const Step step = step_of(*action);
    // A rank whose process is gone for the moment (seen, then replaced by a launcher's restart) cannot
    // be signalled: the action stays due and is retried on the next poll, and the injection is recorded
    // only once a process actually got the signal.
    EventTime sent;
    const int signalled = target.signal_rank(a.rank, step.signal, &sent);
    if (signalled == kSignalRefused) continue;  // its host said why (injection_refused); never again
    if (signalled == 0) {
      later.push_back(std::move(a));
      continue;
    }
    const Trigger& trig = a.fault.trigger;
    if (trig.windowed()) {
      target.record_injection_in_window(a.fault, a.rank, step.name, step.signal, sent, a.window + 1);
      if (a.window + 1 < trig.times) {  // the next window, on the rank's own clock
        later.push_back({a.first_window_ns + window_span(trig, a.window + 1).opens_ns, a.rank, a.fault, false,
                         a.window + 1, a.first_window_ns});
      }
    } else {
      target.record_injection(a.fault, a.rank, step.name, step.signal, sent);
    }
    if (!step.stops) continue;
    stopped_ranks_.push_back(a.rank);
    if (step.resume_after_ms && *step.resume_after_ms > 0) {
      later.push_back({now_ns + static_cast<int64_t>(*step.resume_after_ms * 1e6), a.rank, a.fault, true,
                       a.window, a.first_window_ns});
    }
  }
  actions_ = std::move(later);
}

void ProcFaultSchedule::release_stopped(RankSignaller& target) {
  for (int rank : stopped_ranks_) target.signal_rank(rank, SIGCONT);
  stopped_ranks_.clear();
  actions_.clear();
}

}  // namespace ncclfi::cli
