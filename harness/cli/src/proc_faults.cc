#include "proc_faults.h"

#include <signal.h>
#include <string.h>

#include <algorithm>

namespace ncclfi::cli {

int parse_signal(const nlohmann::json& value) {
  if (value.is_number_integer()) return value.get<int>();
  if (!value.is_string()) return -1;
  std::string name = value.get<std::string>();
  if (name.rfind("SIG", 0) == 0) name = name.substr(3);
  for (int sig = 1; sig < NSIG; ++sig) {
    const char* abbrev = sigabbrev_np(sig);
    if (abbrev != nullptr && name == abbrev) return sig;
  }
  try {
    return std::stoi(name);
  } catch (const std::exception&) {
    return -1;
  }
}

namespace {

// The signal a proc fault sends: `stop` SIGSTOP, `kill` its `signal` (SIGKILL when absent or unknown).
int fault_signal(const Fault& fault) {
  if (fault.kind == "stop") return SIGSTOP;
  const int sig = fault.params.contains("signal") ? parse_signal(fault.params["signal"]) : SIGKILL;
  return sig > 0 ? sig : SIGKILL;
}

}  // namespace

ProcFaultSchedule::ProcFaultSchedule(const Scenario& scenario) {
  for (const Fault& f : scenario.plan.faults) {
    if (f.layer != Layer::kProc || !f.trigger.armed) continue;
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
      target.signal_rank(a.rank, SIGCONT);
      stopped_ranks_.erase(std::remove(stopped_ranks_.begin(), stopped_ranks_.end(), a.rank),
                           stopped_ranks_.end());
      continue;
    }
    const bool kill = a.fault.kind == "kill";
    if (!kill && a.fault.kind != "stop") continue;
    const int sig = fault_signal(a.fault);
    // A rank whose process is gone for the moment (seen, then replaced by a launcher's restart) cannot
    // be signalled: the action stays due and is retried on the next poll, and the injection is recorded
    // only once a process actually got the signal.
    EventTime sent;
    if (target.signal_rank(a.rank, sig, &sent) == 0) {
      later.push_back(std::move(a));
      continue;
    }
    target.record_injection(a.fault, a.rank, kill ? "kill" : "stop", sig, sent);
    if (kill) continue;
    stopped_ranks_.push_back(a.rank);
    const double ms = a.fault.param_double("ms", 0);
    if (ms > 0) later.push_back({now_ns + static_cast<int64_t>(ms * 1e6), a.rank, a.fault, true});
  }
  actions_ = std::move(later);
}

void ProcFaultSchedule::release_stopped(RankSignaller& target) {
  for (int rank : stopped_ranks_) target.signal_rank(rank, SIGCONT);
  stopped_ranks_.clear();
  actions_.clear();
}

}  // namespace ncclfi::cli
