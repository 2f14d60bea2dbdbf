// Judgement: from a History and a scenario's `expect` object to an outcome, the detecting mechanisms,
// the detection latency and a verdict (DESIGN.md, "Expectations and outcomes"). Jepsen's model: each
// checker answers pass, fail or unknown with a reason; a checker that throws counts as unknown; the
// worst answer wins (fail > unknown > pass). Checkers read only the History (and, for log_matches,
// the rank logs it names under the run directory).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "history.h"

namespace ncclfi::harness {

enum class Outcome { kClean, kDegraded, kDetected, kHung, kSilentCorruption, kRecovered };
std::string_view to_string(Outcome outcome);  // "clean", "degraded", ...
std::optional<Outcome> outcome_from_string(std::string_view name);

// Ordered so that a larger value is worse: the verdict is the max of the answers.
enum class Answer { kPass = 0, kUnknown = 1, kFail = 2 };
std::string_view to_string(Answer answer);  // "pass", "unknown", "fail"
Answer worst(Answer a, Answer b);

struct CheckResult {
  std::string field;  // the expect field: "outcome", "detected_by", "detection_s", ...
  Answer answer = Answer::kUnknown;
  std::string reason;  // always set: what was expected and what was observed
};

// Timing figures of a run, from its events: total = max over ranks of done.seconds (else the
// launch-to-end span); slowest step = the longest op/step duration (op.dur_us, step dur).
struct Performance {
  std::optional<double> total_s;
  std::optional<double> slowest_step_s;
};
Performance measure_performance(const History& history);

struct JudgeOptions {
  // Relative slow-down (total or slowest step) over the baseline above which a finished run is
  // `degraded`. Overridden by expect.degraded_margin when present.
  double degraded_margin = 0.20;
  // Run directory: rank log paths in History::rank_logs are relative to it (log_matches).
  std::string run_dir;
};

struct Judgement {
  Outcome outcome = Outcome::kClean;
  std::string outcome_reason;
  // Distinct mechanisms, in order of their first detection. When the harness deadline ended the run,
  // detections made after its teardown began (a frozen rank's watchdog woken by SIGCONT/SIGTERM) are
  // left out here and in the outcome and checks; they stay on the timeline.
  std::vector<std::string> mechanisms;
  std::optional<Detection> first_detection;   // first detection at or after the first injection
  std::optional<int64_t> first_injection_ns;  // first "inject" event (any source)
  std::optional<double> detection_s;          // first detection - first injection, seconds
  int restarts = 0;                           // harness relaunches + torchrun restarts
  Performance performance;
  std::vector<CheckResult> checks;  // one per expect field (sorted by field name)
  Answer verdict = Answer::kUnknown;
  std::vector<std::string> reasons;  // reasons of the non-pass checks (all, if all pass)
};

// Sorts history.events (and detections) by ts_ns, stable; the timeline every report shows.
void sort_history(History& history);

// The outcome alone (needs the baseline in History for clean vs degraded).
Outcome decide_outcome(const History& history, double degraded_margin, std::string* reason = nullptr);

// Sorts the history, then computes everything above and runs one checker per field of `expect`
// (outcome, detected_by, detection_s, ranks, restarts, log_matches, result; degraded_margin is a
// setting, not a check; any other field answers unknown). An empty or non-object expect gives
// verdict unknown. Never throws.
Judgement judge(History& history, const nlohmann::json& expect, const JudgeOptions& options = {});

// Whether the expectation needs a fault-free baseline run (outcome clean or degraded): the runner
// makes one and stores its measure_performance() in History::baseline_*.
bool expectation_needs_baseline(const nlohmann::json& expect);

nlohmann::json to_json(const Judgement& judgement);
Judgement judgement_from_json(const nlohmann::json& doc);

// ---- individual checkers (exposed for tests and for reuse; each may throw, judge() catches) ----
struct CheckContext {
  const History& history;
  const Judgement& judgement;  // outcome, mechanisms, first detection, latency already filled
  const JudgeOptions& options;
};
CheckResult check_outcome(const nlohmann::json& expected, const CheckContext& ctx);
CheckResult check_detected_by(const nlohmann::json& expected, const CheckContext& ctx);
CheckResult check_detection_s(const nlohmann::json& expected, const CheckContext& ctx);
CheckResult check_ranks(const nlohmann::json& expected, const CheckContext& ctx);
CheckResult check_restarts(const nlohmann::json& expected, const CheckContext& ctx);
CheckResult check_ras_ranks(const nlohmann::json& expected, const CheckContext& ctx);
CheckResult check_log_matches(const nlohmann::json& expected, const CheckContext& ctx);
CheckResult check_result(const nlohmann::json& expected, const CheckContext& ctx);

}  // namespace ncclfi::harness
