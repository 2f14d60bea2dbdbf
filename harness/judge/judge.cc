// judge(): sorts the history, derives outcome, mechanisms and latency, runs one check per expect
// field plus the judge's own, and folds the answers (worst wins).
#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>

#include "judge.h"
#include "judge_internal.h"

namespace ncclfi::harness {
namespace {

using Check = std::function<CheckResult(const CheckContext&)>;

const std::map<std::string, Check>& checks_by_field() {
  static const std::map<std::string, Check> table = {
      {"outcome", check_outcome},     {"detected_by", check_detected_by}, {"detection_s", check_detection_s},
      {"ranks", check_ranks},         {"restarts", check_restarts},       {"log_matches", check_log_matches},
      {"result", check_result},       {"ras_ranks", check_ras_ranks},     {"resume_s", check_resume_s},
      {"survivors", check_survivors},
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

// Seconds from the injection to the detection: the monotonic clock when both carry it from one
// host (immune to wall-clock steps), else the wall clock.
double seconds_between(const HistoryEvent& injection, const Detection& detection) {
  return harness::seconds_between(injection.ts_ns, injection.mono_ns, injection.host, detection.ts_ns,
                                  detection.mono_ns, detection.host);
}

CheckResult run_check(const std::string& field, const Check& check, const CheckContext& ctx) {
  try {
    return check(ctx);
  } catch (const std::exception& e) {
    return CheckResult{field, Answer::kUnknown, std::string("check failed: ") + e.what()};
  } catch (...) {
    return CheckResult{field, Answer::kUnknown, "check failed with an unknown exception"};
  }
}

}  // namespace

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

Judgement judge(History& history, const nlohmann::json& expect, const JudgeOptions& options) {
  return judge(history, parse_expectation(expect), options);
}

Judgement judge(History& history, const Expectation& expect, const JudgeOptions& options) {
  Judgement j;
  settle_history(history);
  assign_attempts(history);
  sort_history(history);

  const HistoryEvent* first_injection = nullptr;
  for (const auto& e : history.events) {
    if (detail::is_inject(e)) {
      first_injection = &e;
      j.first_injection_ns = e.ts_ns;
      break;
    }
  }
  const detail::DetectionWindow window = detail::detection_window(history);
  for (const auto& d : history.detections) {
    if (!window.counts(d)) continue;  // before the fault, or woken by the deadline teardown
    if (std::find(j.mechanisms.begin(), j.mechanisms.end(), d.mechanism) == j.mechanisms.end()) {
      j.mechanisms.push_back(d.mechanism);
    }
    if (!j.first_detection) j.first_detection = d;
  }
  if (j.first_detection && first_injection)
    j.detection_s = seconds_between(*first_injection, *j.first_detection);
  j.restarts = std::max(0, detail::last_attempt(history)) + detail::torchrun_restarts(history);
  if (const auto in_place = detail::in_place_recovery(history)) {
    j.survivors = static_cast<int>(in_place->survivors.size());
    j.resume_s = in_place->resume_s;
    j.in_place_problem = in_place->problem;
  }
  j.performance = measure_performance(history);
  j.outcome = decide_outcome(history, expect.margin(), &j.outcome_reason, &j.timing);
  j.notes = nccl_env_notes(history.nccl_env);

  if (expect.empty() && expect.problems.empty()) {
    j.verdict = Answer::kUnknown;
    j.reasons.push_back("no expectation to check");
    return j;
  }
  const CheckContext ctx{history, j, expect, options};
  auto add = [&](CheckResult r) { j.checks.push_back(std::move(r)); };
  for (const auto& problem : expect.problems) {
    if (problem.field.empty()) {
      add(CheckResult{"expect", Answer::kUnknown,
                      problem.pointer + ": expected " + problem.expected + ", got " + problem.found});
    }
  }
  for (const auto& [field, value] : expect.doc.items()) {
    if (is_expect_setting(field) && !expect.problem_for(field)) continue;  // a setting, not a check
    if (const auto* problem = expect.problem_for(field)) {
      add(CheckResult{field, Answer::kUnknown,
                      problem->pointer + ": expected " + problem->expected + ", got " + problem->found});
      continue;
    }
    add(run_check(field, checks_by_field().at(field), ctx));
  }
  if (auto r = check_injection(ctx)) add(std::move(*r));
  if (auto r = check_before_the_fault(ctx)) add(std::move(*r));
  if (auto r = check_events_contract(ctx)) add(std::move(*r));
  if (auto r = check_records(ctx)) add(std::move(*r));
  if (auto r = check_shared_gpu(ctx)) add(std::move(*r));  // last: it weighs the failures above
  if (history.interrupted)
    add(CheckResult{"run", Answer::kUnknown, "ncclfi was interrupted: the run is incomplete"});
  settle_verdict(j);
  return j;
}

void settle_verdict(Judgement& j) {
  j.verdict = Answer::kPass;
  for (const auto& c : j.checks) j.verdict = worst(j.verdict, c.answer);
  const bool excused =
      std::any_of(j.checks.begin(), j.checks.end(), [](const CheckResult& c) { return c.excuses_failure; });
  if (j.verdict == Answer::kFail && excused) j.verdict = Answer::kUnknown;
  j.reasons.clear();
  for (const auto& c : j.checks) {
    if (c.answer != Answer::kPass || j.verdict == Answer::kPass)
      j.reasons.push_back(c.field + ": " + c.reason);
  }
}

std::string observed_summary(const Judgement& j) {
  std::string s(to_string(j.outcome));
  if (j.first_detection) s += "(" + j.first_detection->mechanism + ")";
  if (j.restarts > 0) s += " restarts=" + std::to_string(j.restarts);
  if (j.outcome == Outcome::kRecoveredInPlace && j.resume_s) {
    char buf[64];
    std::snprintf(buf, sizeof buf, " resume=%.2fs survivors=%d", *j.resume_s, j.survivors.value_or(0));
    s += buf;
  }
  return s;
}

nlohmann::json to_json(const Judgement& j) {
  nlohmann::json doc = {{"outcome", std::string(to_string(j.outcome))},
                        {"outcome_reason", j.outcome_reason},
                        {"mechanisms", j.mechanisms},
                        {"restarts", j.restarts},
                        {"verdict", std::string(to_string(j.verdict))},
                        {"reasons", j.reasons},
                        {"notes", j.notes}};
  doc["first_injection_ns"] = j.first_injection_ns ? nlohmann::json(*j.first_injection_ns) : nlohmann::json();
  doc["detection_s"] = j.detection_s ? nlohmann::json(*j.detection_s) : nlohmann::json();
  if (j.survivors) {
    doc["in_place_recovery"] = {{"survivors", *j.survivors},
                                {"resume_s", j.resume_s ? nlohmann::json(*j.resume_s) : nlohmann::json()},
                                {"problem", j.in_place_problem}};
  }
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
  auto& timing = doc["timing"] = nlohmann::json::array();
  for (const auto& t : j.timing) timing.push_back(to_json(t));
  auto& checks = doc["checks"] = nlohmann::json::array();
  for (const auto& c : j.checks) {
    checks.push_back(
        {{"field", c.field}, {"answer", std::string(to_string(c.answer))}, {"reason", c.reason}});
    if (c.excuses_failure) checks.back()["excuses_failure"] = true;
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
  j.notes = doc.value("notes", std::vector<std::string>{});
  auto answer_from = [](const std::string& s) {
    return s == "pass" ? Answer::kPass : s == "fail" ? Answer::kFail : Answer::kUnknown;
  };
  j.verdict = answer_from(doc.value("verdict", std::string("unknown")));
  if (doc.contains("first_injection_ns") && doc["first_injection_ns"].is_number_integer()) {
    j.first_injection_ns = doc["first_injection_ns"].get<int64_t>();
  }
  if (doc.contains("detection_s") && doc["detection_s"].is_number())
    j.detection_s = doc["detection_s"].get<double>();
  if (doc.contains("in_place_recovery") && doc["in_place_recovery"].is_object()) {
    const auto& r = doc["in_place_recovery"];
    if (r.contains("survivors") && r["survivors"].is_number_integer())
      j.survivors = r["survivors"].get<int>();
    if (r.contains("resume_s") && r["resume_s"].is_number()) j.resume_s = r["resume_s"].get<double>();
    j.in_place_problem = r.value("problem", std::string());
  }
  if (doc.contains("first_detection") && doc["first_detection"].is_object()) {
    const auto& d = doc["first_detection"];
    j.first_detection = Detection{d.value("mechanism", std::string()),
                                  d.value("rank", -1),
                                  d.value("attempt", 0),
                                  d.value("ts_ns", int64_t{0}),
                                  d.value("evidence", std::string()),
                                  0,
                                  ""};
  }
  if (doc.contains("performance") && doc["performance"].is_object()) {
    const auto& p = doc["performance"];
    if (p.contains("total_s") && p["total_s"].is_number()) j.performance.total_s = p["total_s"].get<double>();
    if (p.contains("slowest_step_s") && p["slowest_step_s"].is_number()) {
      j.performance.slowest_step_s = p["slowest_step_s"].get<double>();
    }
  }
  for (const auto& t : doc.value("timing", nlohmann::json::array()))
    j.timing.push_back(timing_comparison_from_json(t));
  for (const auto& c : doc.value("checks", nlohmann::json::array())) {
    j.checks.push_back(CheckResult{c.value("field", std::string()),
                                   answer_from(c.value("answer", std::string())),
                                   c.value("reason", std::string()), c.value("excuses_failure", false)});
  }
  return j;
}

}  // namespace ncclfi::harness
