// The outcome rules (docs/scenarios.md) and the timing figures they use.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "judge.h"
#include "judge_internal.h"
#include "mechanisms.h"
#include "ncclfi/effects.h"
#include "ncclfi/event_log.h"
#include "noise.h"

namespace ncclfi::harness {
namespace detail {

int last_attempt(const History& history) {
  int last = std::max(0, history.attempts - 1);
  for (const auto& x : history.exits) last = std::max(last, x.attempt);
  return last;
}

int torchrun_restarts(const History& history) {
  std::map<int, int> per_attempt;  // harness attempt -> highest restart_count a worker reported
  for (const auto& e : history.events) {
    // Every workload's start event (ddp_train.py's source is "workload", cpu-ring's "cpu-ring").
    if (e.source == "harness" || e.event != "start") continue;
    if (!e.fields.is_object() || !e.fields.contains("restart_count")) continue;
    const nlohmann::json& count = e.fields.at("restart_count");
    if (!count.is_number_integer()) continue;
    int& best = per_attempt[e.attempt];
    best = std::max(best, count.get<int>());
  }
  int from_workers = 0;
  for (const auto& [attempt, count] : per_attempt) from_workers += count;
  return std::max(history.torchrun_restarts, from_workers);
}

bool is_inject(const HistoryEvent& e) {
  if (e.event != ev::kInject) return false;
  // A front end that fired but could do nothing (the op failed first, no buffer on this rank, device
  // memory the shim cannot touch) says so with effect "none: why" (ncclfi/effects.h): that is not an
  // injection.
  const auto effect = e.fields.find("effect");
  return effect == e.fields.end() || !effect->is_string() || !is_no_effect(effect->get<std::string>());
}

std::optional<int64_t> teardown_start_ns(const History& history) {
  if (!history.deadline_hit) return std::nullopt;
  const int attempt = last_attempt(history);
  std::optional<int64_t> start;
  for (const auto& e : history.events) {
    if (e.source == "harness" && e.event == "deadline") {  // the deadline ends the run: only one
      if (!start || e.ts_ns < *start) start = e.ts_ns;
    }
  }
  if (start) return start;
  for (const auto& x : history.exits) {
    if (x.killed_by_harness && x.attempt == attempt && (!start || x.ts_ns < *start)) start = x.ts_ns;
  }
  return start;
}

std::optional<int64_t> first_injection_ns(const History& history) {
  std::optional<int64_t> first;
  for (const auto& e : history.events)
    if (is_inject(e) && (!first || e.ts_ns < *first)) first = e.ts_ns;
  return first;
}

bool DetectionWindow::before_the_fault(const Detection& d) const {
  return first_injection_ns && d.ts_ns < *first_injection_ns;
}

bool DetectionWindow::counts(const Detection& d) const {
  if (before_the_fault(d)) return false;
  return d.mechanism == kHarnessDeadlineMechanism.name || !teardown_ns || d.ts_ns < *teardown_ns;
}

DetectionWindow detection_window(const History& history) {
  return DetectionWindow{first_injection_ns(history), teardown_start_ns(history)};
}

std::string detections_before_the_fault(const History& history, const DetectionWindow& window) {
  std::string text;
  for (const auto& d : history.detections) {
    if (!window.before_the_fault(d)) continue;
    text +=
        (text.empty() ? "" : ", ") + d.mechanism + (d.rank >= 0 ? " on rank " + std::to_string(d.rank) : "");
  }
  return text;
}

std::string evidence_with_sites(const History& history) {
  constexpr size_t kMaxShown = 3;
  std::vector<std::string> shown;
  for (const auto& e : history.events) {
    if (e.source != "log" || e.event != "log_evidence" || !e.fields.is_object()) continue;
    const std::string site = e.fields.value("site", "");
    if (site.empty()) continue;
    std::string what = e.fields.value("pattern", "") +
                       (e.rank >= 0 ? " on rank " + std::to_string(e.rank) : "") + " (" + site + ")";
    if (std::find(shown.begin(), shown.end(), what) != shown.end()) continue;
    shown.push_back(std::move(what));
    if (shown.size() == kMaxShown) break;
  }
  std::string text;
  for (const auto& w : shown) text += (text.empty() ? "" : ", ") + w;
  return text;
}

bool finished(const History& history, int attempt) {
  if (history.deadline_hit || history.interrupted) return false;
  bool any = false;
  for (const auto& x : history.exits) {
    if (x.attempt != attempt) continue;
    any = true;
    if (x.signal || x.killed_by_harness || !x.exit_code || *x.exit_code != 0) return false;
  }
  if (any) return true;
  // No exit statuses (e.g. a re-read of an old history): every rank said done.
  std::set<int> done;
  for (const auto& e : history.events) {
    if (e.event == ev::kDone && e.attempt == attempt && e.rank >= 0) done.insert(e.rank);
  }
  return history.world_size > 0 && static_cast<int>(done.size()) >= history.world_size;
}

std::string corruption_evidence(const History& history, int attempt) {
  for (const auto& e : history.events) {
    if (e.attempt != attempt) continue;
    const bool unverified = e.event == ev::kDone && e.fields.contains("verified") &&
                            e.fields["verified"].is_boolean() && !e.fields["verified"].get<bool>();
    if (e.event == ev::kResultMismatch || e.event == ev::kNanDetected || unverified) {
      return "rank " + std::to_string(e.rank) + " " + e.event + " " +
             e.fields.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
  }
  return "";
}

std::optional<InPlaceRecovery> in_place_recovery(const History& history) {
  const int attempt = last_attempt(history);
  std::map<int, const HistoryEvent*> recovered, resumed, done;
  for (const auto& e : history.events) {
    if (e.attempt != attempt || e.rank < 0 || e.source == "harness") continue;
    if (e.event == ev::kRecovered) recovered.emplace(e.rank, &e);  // the first recovery of the rank
    if (e.event == ev::kResumed) {
      const auto r = recovered.find(e.rank);
      if (r != recovered.end() && e.ts_ns >= r->second->ts_ns) resumed.emplace(e.rank, &e);
    }
    if (e.event == ev::kDone) done.emplace(e.rank, &e);
  }
  if (recovered.empty()) return std::nullopt;
  InPlaceRecovery out;
  std::set<std::string> methods;
  for (const auto& [rank, e] : recovered) {
    out.survivors.insert(rank);
    if (e->fields.contains("method") && e->fields["method"].is_string())
      methods.insert(e->fields["method"].get<std::string>());
  }
  for (const auto& m : methods) out.method += (out.method.empty() ? "" : "+") + m;
  const HistoryEvent* injection = nullptr;
  for (const auto& e : history.events) {
    if (is_inject(e) && (injection == nullptr || e.ts_ns < injection->ts_ns)) injection = &e;
  }
  auto fail = [&](std::string why) {
    out.problem = std::move(why);
    return out;
  };
  // The survivors' own word is not enough: the fault must have fired (the harness's record), the
  // victims must have ended, and every survivor must have finished cleanly.
  if (injection == nullptr) return fail("no fault fired, so nothing was recovered from");
  if (history.deadline_hit) return fail("the harness deadline ended the attempt");
  if (history.interrupted) return fail("ncclfi was interrupted");
  for (const auto& x : history.exits) {
    if (x.attempt != attempt || x.rank < 0) continue;
    const bool survivor = out.survivors.count(x.rank) != 0;
    if (!survivor) {
      out.victims.insert(x.rank);
      continue;
    }
    if (x.signal || x.killed_by_harness || !x.exit_code || *x.exit_code != 0) {
      return fail("survivor rank " + std::to_string(x.rank) + " did not exit 0 after its recovery");
    }
  }
  if (out.victims.empty()) return fail("no rank was lost: every rank recovered");
  double latest = 0;
  for (int rank : out.survivors) {
    const auto r = resumed.find(rank);
    if (r == resumed.end())
      return fail("survivor rank " + std::to_string(rank) + " completed no step after its recovery");
    if (!done.count(rank)) return fail("survivor rank " + std::to_string(rank) + " wrote no `done` event");
    const HistoryEvent& e = *r->second;
    latest = std::max(latest, seconds_between(injection->ts_ns, injection->mono_ns, injection->host, e.ts_ns,
                                              e.mono_ns, e.host));
  }
  out.resume_s = latest;
  return out;
}

std::set<int> ranks_that_detected(const History& history) {
  std::set<int> ranks;
  const DetectionWindow window = detection_window(history);
  for (const auto& d : history.detections) {
    if (d.rank >= 0 && d.mechanism != kHarnessDeadlineMechanism.name && window.counts(d))
      ranks.insert(d.rank);
  }
  return ranks;
}

}  // namespace detail

namespace {

std::optional<double> number_field(const nlohmann::json& fields, const char* key) {
  auto it = fields.find(key);
  if (it == fields.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::string margin_text(double margin) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "margin %.0f%%", margin * 100);
  return buf;
}

}  // namespace

Performance measure_performance(const History& history) {
  Performance perf;
  const int attempt = detail::last_attempt(history);
  for (const auto& e : history.events) {
    if (e.attempt != attempt || e.event != ev::kDone) continue;
    if (auto s = number_field(e.fields, "seconds")) perf.total_s = std::max(perf.total_s.value_or(0.0), *s);
  }
  perf.steps_s = step_durations(history, attempt);
  if (!perf.steps_s.empty())
    perf.slowest_step_s = *std::max_element(perf.steps_s.begin(), perf.steps_s.end());
  if (!perf.total_s && history.end_ns > history.start_ns && history.start_ns > 0) {
    perf.total_s = static_cast<double>(history.end_ns - history.start_ns) / 1e9;
  }
  return perf;
}

std::vector<std::string> missing_done_lines(const History& history, int attempt) {
  constexpr size_t kMaxNamed = 8;
  std::set<int> done;
  for (const auto& e : history.events) {
    if (e.attempt == attempt && e.event == ev::kDone && e.source != "harness" && e.rank >= 0)
      done.insert(e.rank);
  }
  std::set<int> missing;
  for (const auto& x : history.exits) {
    if (x.attempt != attempt || x.rank < 0 || x.signal || !x.exit_code || *x.exit_code != 0) continue;
    if (!done.count(x.rank)) missing.insert(x.rank);
  }
  std::vector<std::string> lines;
  for (int rank : missing) {
    if (lines.size() == kMaxNamed) break;
    lines.push_back("rank " + std::to_string(rank) + " of attempt " + std::to_string(attempt) +
                    " exited 0 without its `done` line: its last events are missing");
  }
  return lines;
}

Outcome decide_outcome(const History& history, double degraded_margin, std::string* reason,
                       std::vector<TimingComparison>* timing) {
  auto say = [&](Outcome o, std::string text) {
    if (reason) *reason = std::move(text);
    return o;
  };
  const int attempt = detail::last_attempt(history);
  const int restarts = attempt + detail::torchrun_restarts(history);
  // In-place recovery: a rank was lost, so the attempt did not "finish", yet the survivors did.
  if (const auto in_place = detail::in_place_recovery(history); in_place && in_place->problem.empty()) {
    if (std::string bad = detail::corruption_evidence(history, attempt); !bad.empty()) {
      return say(Outcome::kSilentCorruption, "recovered in place but finished with wrong data: " + bad);
    }
    char text[200];
    std::snprintf(
        text, sizeof text,
        "%zu survivor(s) carried on without a relaunch (communicator: %s) and finished; %zu rank(s) "
        "lost; resumed %.3f s after the injection",
        in_place->survivors.size(), in_place->method.empty() ? "rebuilt" : in_place->method.c_str(),
        in_place->victims.size(), *in_place->resume_s);
    return say(Outcome::kRecoveredInPlace, text);
  }
  if (detail::finished(history, attempt)) {
    if (std::string bad = detail::corruption_evidence(history, attempt); !bad.empty()) {
      return say(Outcome::kSilentCorruption, "finished with wrong data: " + bad);
    }
    if (restarts > 0) {
      return say(Outcome::kRecovered, "finished correctly after " + std::to_string(restarts) + " restart(s)");
    }
    if (history.baselines.empty())
      return say(Outcome::kClean, "finished (no baseline to compare timings with)");
    const Performance perf = measure_performance(history);
    const auto comparisons = compare_with_baseline(perf.steps_s, perf.total_s, history.baselines);
    if (timing) *timing = comparisons;
    if (comparisons.empty())
      return say(Outcome::kClean, "finished (nothing timed to compare with the baseline)");
    const std::string margin = margin_text(degraded_margin);
    for (const auto& c : comparisons) {
      if (c.slower_beyond(degraded_margin)) {
        return say(Outcome::kDegraded, "finished slower: " + c.text() + ", beyond the " + margin +
                                           (c.noise ? " and the noise" : ""));
      }
    }
    std::string all;
    bool hidden = false;
    for (const auto& c : comparisons) {
      all += (all.empty() ? "" : "; ") + c.text();
      hidden = hidden || c.hidden_by_noise(degraded_margin);
    }
    if (hidden)
      return say(Outcome::kClean, "finished slower than the " + margin + " but within the noise: " + all);
    return say(Outcome::kClean, "finished within the " + margin + ": " + all);
  }
  const detail::DetectionWindow window = detail::detection_window(history);
  for (const auto& d : history.detections) {
    if (d.mechanism != kHarnessDeadlineMechanism.name && window.counts(d)) {
      return say(Outcome::kDetected, "stopped; first noticed by " + d.mechanism +
                                         (d.rank >= 0 ? " on rank " + std::to_string(d.rank) : ""));
    }
  }
  // Noticed before the fault was injected: not the fault's detection, but the reader should know.
  const std::string before = detail::detections_before_the_fault(history, window);
  const std::string also = before.empty() ? "" : " (before the fault: " + before + ")";
  if (history.deadline_hit)
    return say(Outcome::kHung, "only the harness deadline ended it; nothing detected the fault" + also);
  if (history.interrupted)
    return say(Outcome::kHung,
               "ncclfi was interrupted before the job ended; nothing detected the fault" + also);
  // No mechanism, but lines that point to a site (a kernel's link-down, a launcher's task end): say so.
  const std::string evidence = detail::evidence_with_sites(history);
  return say(Outcome::kDetected, "stopped with a failing exit status, no mechanism recognised" + also +
                                     (evidence.empty() ? "" : "; the logs show " + evidence));
}

}  // namespace ncclfi::harness
