// Exit statuses into detections: the workload contract's exit codes, the harness's own deadline, and
// ranks that failed only because a peer died first.
#include <algorithm>
#include <csignal>
#include <cstring>
#include <map>
#include <optional>

#include "ncclfi/event_log.h"
#include "ncclfi/fault_kinds.h"
#include "observe.h"

namespace ncclfi::harness {
namespace {

bool abnormal(const RankExit& x) {
  return x.signal.has_value() || (x.exit_code.has_value() && *x.exit_code != 0);
}

std::string describe(const RankExit& x) {
  std::string text = "rank " + std::to_string(x.rank) + " (pid " + std::to_string(x.pid) + ")";
  if (x.signal) {
    const char* name = sigabbrev_np(*x.signal);
    text +=
        " killed by signal " + std::to_string(*x.signal) + (name ? std::string(" (SIG") + name + ")" : "");
  } else if (x.exit_code) {
    text += " exited " + std::to_string(*x.exit_code);
  } else {
    text += " ended (status unknown)";
  }
  if (x.killed_by_harness) text += ", killed by the harness";
  return text;
}

// Ranks that a fault of their own killed or stopped in an attempt (crash, kill, stop: the kind's traits
// say so): their death is the fault, not a detection.
bool self_inflicted(const History& h, const RankExit& x) {
  for (const auto& e : h.events) {
    if (e.event != ev::kInject || e.attempt != x.attempt || e.rank != x.rank) continue;
    const FaultKindSpec* kind =
        find_fault_kind(e.fields.value("layer", std::string()), e.fields.value("kind", std::string()));
    if (kind != nullptr && kind->takes_rank_down()) return true;
  }
  return false;
}

}  // namespace

void observe_exits(History& history) {
  settle_history(history);  // the latest injections of each kind too
  if (std::any_of(history.events.begin(), history.events.end(),
                  [](const HistoryEvent& e) { return e.source == "exit"; })) {
    return;  // already observed
  }
  std::vector<RankExit> exits = history.exits;
  std::stable_sort(exits.begin(), exits.end(),
                   [](const RankExit& a, const RankExit& b) { return a.ts_ns < b.ts_ns; });
  const int last_attempt = history.attempts - 1;
  // The harness's own "deadline" event, when the runner wrote one, times the deadline exactly.
  std::optional<int64_t> deadline_event_ns;
  for (const auto& e : history.events) {
    if (e.source == "harness" && e.event == "deadline" &&
        (!deadline_event_ns || e.ts_ns < *deadline_event_ns)) {
      deadline_event_ns = e.ts_ns;
    }
  }
  bool deadline_recorded = false;
  std::map<int, int64_t> first_abnormal_ns;  // per attempt: the first abnormal end of any rank
  for (const RankExit& x : exits) {
    HistoryEvent e;
    e.ts_ns = x.ts_ns;
    e.mono_ns = x.mono_ns;
    e.host = x.host;
    e.rank = x.rank;
    e.attempt = x.attempt;
    e.pid = x.pid;
    e.source = "exit";
    e.event = "exit";
    e.fields = {{"killed_by_harness", x.killed_by_harness}, {"text", describe(x)}};
    if (x.exit_code) e.fields["code"] = *x.exit_code;
    if (x.signal) e.fields["signal"] = *x.signal;
    add_event(history, std::move(e));

    if (!abnormal(x)) continue;
    auto first = first_abnormal_ns.find(x.attempt);
    const bool peer_went_first = first != first_abnormal_ns.end() && first->second <= x.ts_ns;
    if (first == first_abnormal_ns.end()) first_abnormal_ns[x.attempt] = x.ts_ns;

    if (x.killed_by_harness) {
      // The deadline ended the attempt that hit it (the last one): one detection, at the first kill.
      if (history.deadline_hit && x.attempt == last_attempt && !deadline_recorded) {
        deadline_recorded = true;
        add_detection(history,
                      Detection{std::string(kHarnessDeadlineMechanism.name), -1, x.attempt,
                                deadline_event_ns.value_or(x.ts_ns), "deadline reached: " + describe(x)});
      }
      continue;
    }
    std::string mechanism = x.exit_code ? mechanism_for_exit_code(*x.exit_code) : "";
    if (mechanism.empty()) {
      if (self_inflicted(history, x) || !peer_went_first) continue;
      mechanism = kPeerExitMechanism.name;
    }
    add_detection(
        history, Detection{mechanism, x.rank, x.attempt, x.ts_ns, "exit: " + describe(x), x.mono_ns, x.host});
  }
  // A deadline with every rank already gone (e.g. a launcher that hung after its ranks): still one
  // harness_deadline detection, at the end of the run.
  if (history.deadline_hit && !deadline_recorded) {
    add_detection(history, Detection{std::string(kHarnessDeadlineMechanism.name), -1, last_attempt,
                                     history.end_ns, "deadline reached"});
  }
}

}  // namespace ncclfi::harness
