// Judgement: a function of (History, Expectation) giving an outcome, the detecting mechanisms, the
// detection latency and a verdict (docs/scenarios.md). Each check answers pass, fail or unknown with a
// reason; the worst answer wins (fail > unknown > pass). Checks read only the History (and, for
// log_matches, the rank logs it names under the run directory). Besides one check per expect field,
// the judge adds its own: "injection" (a run that armed faults and injected nothing never passes),
// "before_fault" (detections before the first injection, which never count as the fault's), "events"
// (lines that broke the events contract) and "run" (an interrupted run).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "expectation.h"
#include "history.h"
#include "noise.h"

namespace ncclfi::harness {

// Ordered so that a larger value is worse: the verdict is the max of the answers.
enum class Answer { kPass = 0, kUnknown = 1, kFail = 2 };
std::string_view to_string(Answer answer);  // "pass", "unknown", "fail"
Answer worst(Answer a, Answer b);

struct CheckResult {
  std::string field;  // the expect field ("outcome", "detection_s", ...) or "injection", "before_fault",
                      // "events", "records", "run"
  Answer answer = Answer::kUnknown;
  std::string reason;  // always set: what was expected and what was observed
  // This check says the other checks' failure may not be the job's (shared-GPU mode's own MPS
  // failure): a verdict that would be fail is unknown instead.
  bool excuses_failure = false;
};

// Timing figures of a run, from its events: total = max over ranks of done.seconds (else the
// launch-to-end span); slowest step = the longest op/step duration; steps = step_durations().
struct Performance {
  std::optional<double> total_s;
  std::optional<double> slowest_step_s;
  std::vector<double> steps_s;
};
Performance measure_performance(const History& history);

// The ranks of `attempt` that exited 0 without a `done` event: for a workload that writes `done` before
// every normal exit (ncclfi's own), each is a record lost (a file system full at the end and freed
// since, a truncated events file). One line per rank, at most 8, for records_lost.
std::vector<std::string> missing_done_lines(const History& history, int attempt);

struct JudgeOptions {
  // Run directory: rank log paths in History::rank_logs are relative to it (log_matches).
  std::string run_dir;
};

struct Judgement {
  Outcome outcome = Outcome::kClean;
  std::string outcome_reason;
  // Distinct mechanisms, in order of their first detection. Detections before the first injection (the
  // job failing on its own: check "before_fault" names them) and, when the harness deadline ended the
  // run, those made after its teardown began (a frozen rank's watchdog woken by SIGCONT/SIGTERM) are left
  // out here and in the outcome and checks; they stay on the timeline.
  std::vector<std::string> mechanisms;
  std::optional<Detection> first_detection;   // first detection that counts (at or after the first injection)
  std::optional<int64_t> first_injection_ns;  // first "inject" event (any source), wall clock
  // first detection - first injection, seconds: on the monotonic clock when both events carry
  // mono_ns from the same host, else on the wall clock.
  std::optional<double> detection_s;
  int restarts = 0;  // harness relaunches + torchrun restarts
  // In-place recovery (outcome recovered_in_place), when some rank of the final attempt recovered:
  // how many ranks carried on, seconds from the injection to the first step after the recovery on
  // every survivor, and why it does not count as one ("" when it does).
  std::optional<int> survivors;
  std::optional<double> resume_s;
  std::string in_place_problem;
  Performance performance;
  std::vector<TimingComparison> timing;  // the run against its baseline (empty without one)
  std::vector<CheckResult> checks;       // one per expect field (by field name), then the judge's own
  Answer verdict = Answer::kUnknown;
  std::vector<std::string> reasons;  // reasons of the non-pass checks (all, if all pass)
  // What the reader should know that is no check: NCCL_* settings NCCL did not read or took otherwise
  // (nccl_env.h). Never changes the verdict.
  std::vector<std::string> notes;
};

// Sorts history.events (and detections) by ts_ns, stable; the timeline every report shows.
void sort_history(History& history);

// The outcome alone (needs the baselines in History for clean vs degraded). `timing` receives the
// comparison with the baseline when one was made.
Outcome decide_outcome(const History& history, double degraded_margin, std::string* reason = nullptr,
                       std::vector<TimingComparison>* timing = nullptr);

// Sorts the history, then computes everything above and runs one check per field of the
// expectation; an expectation problem answers unknown for its field; an empty expectation gives
// verdict unknown. Never throws.
Judgement judge(History& history, const Expectation& expect, const JudgeOptions& options = {});
// The same for an expectation still in JSON (tests, re-reads): parse_expectation, then judge.
Judgement judge(History& history, const nlohmann::json& expect, const JudgeOptions& options = {});
// The verdict (the worst answer of the checks, but unknown instead of fail when a check excuses the
// failure) and the reasons, from judgement.checks.
void settle_verdict(Judgement& judgement);

nlohmann::json to_json(const Judgement& judgement);
Judgement judgement_from_json(const nlohmann::json& doc);

// "drop1 detected(workload_watchdog) 3.02s" style short strings used by table and reports.
std::string observed_summary(const Judgement& judgement);

// ---- individual checks (exposed for tests; each may throw, judge() catches) ----
struct CheckContext {
  const History& history;
  const Judgement& judgement;  // outcome, mechanisms, first detection, latency already filled
  const Expectation& expect;
  const JudgeOptions& options;
};
CheckResult check_outcome(const CheckContext& ctx);
CheckResult check_detected_by(const CheckContext& ctx);
CheckResult check_detection_s(const CheckContext& ctx);
CheckResult check_ranks(const CheckContext& ctx);
CheckResult check_restarts(const CheckContext& ctx);
CheckResult check_resume_s(const CheckContext& ctx);
CheckResult check_survivors(const CheckContext& ctx);
CheckResult check_ras_ranks(const CheckContext& ctx);
CheckResult check_log_matches(const CheckContext& ctx);
CheckResult check_result(const CheckContext& ctx);
// The judge's own checks: set only when they apply.
std::optional<CheckResult> check_injection(const CheckContext& ctx);
// Set when something was detected before the first injection: "before_fault", a pass that names them
// (they are not the fault's detection: the outcome and the other checks leave them out).
std::optional<CheckResult> check_before_the_fault(const CheckContext& ctx);
std::optional<CheckResult> check_events_contract(const CheckContext& ctx);
// Unknown when history.records_lost says some of the run's records could not be written.
std::optional<CheckResult> check_records(const CheckContext& ctx);
// Set only when the checks so far fail and ncclfi's own MPS server failed in the run (or, under it, a
// rank was refused the GPU): unknown, excusing the failure, with those lines.
std::optional<CheckResult> check_shared_gpu(const CheckContext& ctx);

}  // namespace ncclfi::harness
