// judge(): sorts the history, derives outcome, mechanisms and latency, runs one checker per expect
// field and folds the answers (worst wins).
#include <algorithm>
#include <array>
#include <functional>
#include <map>

#include "judge.h"
#include "judge_internal.h"

namespace ncclfi::harness {
namespace {

constexpr std::array<std::string_view, 6> kOutcomeNames = {"clean", "degraded",          "detected",
                                                           "hung",  "silent_corruption", "recovered"};

using Checker = std::function<CheckResult(const nlohmann::json&, const CheckContext&)>;

const std::map<std::string, Checker>& checkers() {
  static const std::map<std::string, Checker> table = {
      {"outcome", check_outcome}, {"detected_by", check_detected_by}, {"detection_s", check_detection_s},
      {"ranks", check_ranks},     {"restarts", check_restarts},       {"log_matches", check_log_matches},
      {"result", check_result},   {"ras_ranks", check_ras_ranks},
  };
  return table;
}

// Events read from a single events.jsonl shared by all attempts carry attempt 0: give them the
// attempt whose harness launch precedes them.
void assign_attempts(History& history) {
  std::vector<std::pair<int64_t, int>> launches;
  for (const auto& e : history.events) {
    if (e.source == "harness" && (e.event == "launch" || e.event == "restart") && e.attempt > 0) {
      launches.emplace_back(e.ts_ns, e.attempt);
    }
  }
  if (launches.empty()) return;
  std::sort(launches.begin(), launches.end());
  auto attempt_at = [&](int64_t ts) {
    int attempt = 0;
    for (const auto& [t, a] : launches) {
      if (t <= ts) attempt = a;
    }
    return attempt;
  };
  for (auto& e : history.events) {
    if (e.attempt == 0 && e.source != "harness") e.attempt = attempt_at(e.ts_ns);
  }
  for (auto& d : history.detections) {
    if (d.attempt == 0) d.attempt = attempt_at(d.ts_ns);
  }
}

}  // namespace

std::string_view to_string(Outcome outcome) {
  return kOutcomeNames[static_cast<size_t>(outcome)];
}

std::optional<Outcome> outcome_from_string(std::string_view name) {
  for (size_t i = 0; i < kOutcomeNames.size(); ++i) {
    if (kOutcomeNames[i] == name) return static_cast<Outcome>(i);
  }
  return std::nullopt;
}

std::string_view to_string(Answer answer) {
  switch (answer) {
    case Answer::kPass:
      return "pass";
    case Answer::kFail:
      return "fail";
    case Answer::kUnknown:
      break;
  }
  return "unknown";
}

Answer worst(Answer a, Answer b) {
  return static_cast<int>(a) >= static_cast<int>(b) ? a : b;
}

void sort_history(History& history) {
  std::stable_sort(history.events.begin(), history.events.end(),
                   [](const HistoryEvent& a, const HistoryEvent& b) { return a.ts_ns < b.ts_ns; });
  std::stable_sort(history.detections.begin(), history.detections.end(),
                   [](const Detection& a, const Detection& b) { return a.ts_ns < b.ts_ns; });
}

bool expectation_needs_baseline(const nlohmann::json& expect) {
  if (!expect.is_object() || !expect.contains("outcome")) return false;
  const auto& o = expect["outcome"];
  auto needs = [](const nlohmann::json& v) {
    return v.is_string() && (v.get<std::string>() == "clean" || v.get<std::string>() == "degraded");
  };
  if (needs(o)) return true;
  if (o.is_array()) return std::any_of(o.begin(), o.end(), needs);
  return false;
}

Judgement judge(History& history, const nlohmann::json& expect, const JudgeOptions& options) {
  Judgement j;
  JudgeOptions opts = options;
  if (expect.is_object() && expect.contains("degraded_margin") && expect["degraded_margin"].is_number()) {
    opts.degraded_margin = expect["degraded_margin"].get<double>();
  }
  assign_attempts(history);
  sort_history(history);

  for (const auto& e : history.events) {
    if (detail::is_inject(e)) {
      j.first_injection_ns = e.ts_ns;
      break;
    }
  }
  const auto teardown = detail::teardown_start_ns(history);
  for (const auto& d : history.detections) {
    if (!detail::counts(d, teardown)) continue;  // woken by the deadline teardown: not a detection
    if (std::find(j.mechanisms.begin(), j.mechanisms.end(), d.mechanism) == j.mechanisms.end()) {
      j.mechanisms.push_back(d.mechanism);
    }
    if (!j.first_detection && (!j.first_injection_ns || d.ts_ns >= *j.first_injection_ns))
      j.first_detection = d;
  }
  if (j.first_detection && j.first_injection_ns) {
    j.detection_s = static_cast<double>(j.first_detection->ts_ns - *j.first_injection_ns) / 1e9;
  }
  j.restarts = std::max(0, detail::last_attempt(history)) + detail::torchrun_restarts(history);
  j.performance = measure_performance(history);
  j.outcome = decide_outcome(history, opts.degraded_margin, &j.outcome_reason);

  if (!expect.is_object() || expect.empty()) {
    j.verdict = Answer::kUnknown;
    j.reasons.push_back("no expectation to check");
    return j;
  }
  const CheckContext ctx{history, j, opts};
  Answer verdict = Answer::kPass;
  for (const auto& [field, expected] : expect.items()) {
    if (field == "degraded_margin") continue;  // a setting of the outcome rule, not a check
    CheckResult r;
    auto it = checkers().find(field);
    if (it == checkers().end()) {
      r = CheckResult{field, Answer::kUnknown, "no checker for expect field \"" + field + "\""};
    } else {
      try {
        r = it->second(expected, ctx);
      } catch (const std::exception& e) {
        r = CheckResult{field, Answer::kUnknown, std::string("checker failed: ") + e.what()};
      } catch (...) {
        r = CheckResult{field, Answer::kUnknown, "checker failed with an unknown exception"};
      }
    }
    verdict = worst(verdict, r.answer);
    j.checks.push_back(std::move(r));
  }
  if (history.interrupted) {
    j.checks.push_back(CheckResult{"run", Answer::kUnknown, "ncclfi was interrupted: the run is incomplete"});
    verdict = worst(verdict, Answer::kUnknown);
  }
  j.verdict = verdict;
  for (const auto& c : j.checks) {
    if (c.answer != Answer::kPass || verdict == Answer::kPass) j.reasons.push_back(c.field + ": " + c.reason);
  }
  return j;
}

nlohmann::json to_json(const Judgement& j) {
  nlohmann::json doc = {{"outcome", std::string(to_string(j.outcome))},
                        {"outcome_reason", j.outcome_reason},
                        {"mechanisms", j.mechanisms},
                        {"restarts", j.restarts},
                        {"verdict", std::string(to_string(j.verdict))},
                        {"reasons", j.reasons}};
  doc["first_injection_ns"] = j.first_injection_ns ? nlohmann::json(*j.first_injection_ns) : nlohmann::json();
  doc["detection_s"] = j.detection_s ? nlohmann::json(*j.detection_s) : nlohmann::json();
  if (j.first_detection) {
    doc["first_detection"] = {{"mechanism", j.first_detection->mechanism},
                              {"rank", j.first_detection->rank},
                              {"attempt", j.first_detection->attempt},
                              {"ts_ns", j.first_detection->ts_ns},
                              {"evidence", j.first_detection->evidence}};
  } else {
    doc["first_detection"] = nullptr;
  }
  doc["performance"] = {
      {"total_s", j.performance.total_s ? nlohmann::json(*j.performance.total_s) : nlohmann::json()},
      {"slowest_step_s",
       j.performance.slowest_step_s ? nlohmann::json(*j.performance.slowest_step_s) : nlohmann::json()}};
  auto& checks = doc["checks"] = nlohmann::json::array();
  for (const auto& c : j.checks) {
    checks.push_back(
        {{"field", c.field}, {"answer", std::string(to_string(c.answer))}, {"reason", c.reason}});
  }
  return doc;
}

Judgement judgement_from_json(const nlohmann::json& doc) {
  Judgement j;
  if (!doc.is_object()) return j;
  j.outcome = outcome_from_string(doc.value("outcome", std::string("clean"))).value_or(Outcome::kClean);
  j.outcome_reason = doc.value("outcome_reason", std::string());
  j.mechanisms = doc.value("mechanisms", std::vector<std::string>{});
  j.restarts = doc.value("restarts", 0);
  j.reasons = doc.value("reasons", std::vector<std::string>{});
  auto answer_from = [](const std::string& s) {
    return s == "pass" ? Answer::kPass : s == "fail" ? Answer::kFail : Answer::kUnknown;
  };
  j.verdict = answer_from(doc.value("verdict", std::string("unknown")));
  if (doc.contains("first_injection_ns") && doc["first_injection_ns"].is_number_integer()) {
    j.first_injection_ns = doc["first_injection_ns"].get<int64_t>();
  }
  if (doc.contains("detection_s") && doc["detection_s"].is_number())
    j.detection_s = doc["detection_s"].get<double>();
  if (doc.contains("first_detection") && doc["first_detection"].is_object()) {
    const auto& d = doc["first_detection"];
    j.first_detection =
        Detection{d.value("mechanism", std::string()), d.value("rank", -1), d.value("attempt", 0),
                  d.value("ts_ns", int64_t{0}), d.value("evidence", std::string())};
  }
  if (doc.contains("performance") && doc["performance"].is_object()) {
    const auto& p = doc["performance"];
    if (p.contains("total_s") && p["total_s"].is_number()) j.performance.total_s = p["total_s"].get<double>();
    if (p.contains("slowest_step_s") && p["slowest_step_s"].is_number()) {
      j.performance.slowest_step_s = p["slowest_step_s"].get<double>();
    }
  }
  for (const auto& c : doc.value("checks", nlohmann::json::array())) {
    j.checks.push_back(CheckResult{c.value("field", std::string()),
                                   answer_from(c.value("answer", std::string())),
                                   c.value("reason", std::string())});
  }
  return j;
}

}  // namespace ncclfi::harness
