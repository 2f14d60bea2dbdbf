// Each checker's pass, fail and unknown answers; throwing checkers; worst answer wins.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "history_builder.h"
#include "judge.h"
#include "observe.h"

namespace ncclfi::harness {
namespace {
using namespace testing;
using json = nlohmann::json;

// A 4-rank drop scenario: injection at 1 s, rank watchdogs at 4.0-4.2 s, all exit 3.
History detected_run() {
  History h = make_history(4);
  add_inject(h, 1.0, 1);
  for (int r = 0; r < 4; ++r) {
    add_event(h, 4.0 + 0.05 * r, r, "workload", "watchdog_fired", {{"waited_ms", 3000}});
    add_detection(h, 4.0 + 0.05 * r, r, "workload_watchdog");
  }
  all_exit(h, 4.3, 3);
  return h;
}

CheckResult only_check(History h, const json& expect, const JudgeOptions& o = {}) {
  Judgement j = judge(h, expect, o);
  EXPECT_EQ(j.checks.size(), 1u);
  return j.checks.empty() ? CheckResult{} : j.checks[0];
}

TEST(CheckOutcome, PassFailUnknown) {
  EXPECT_EQ(only_check(detected_run(), {{"outcome", "detected"}}).answer, Answer::kPass);
  EXPECT_EQ(only_check(detected_run(), {{"outcome", json::array({"hung", "detected"})}}).answer,
            Answer::kPass);
  auto fail = only_check(detected_run(), {{"outcome", "recovered"}});
  EXPECT_EQ(fail.answer, Answer::kFail);
  EXPECT_NE(fail.reason.find("observed detected"), std::string::npos);
  History finished = make_history(1);
  all_exit(finished, 1, 0);
  auto unknown = only_check(finished, {{"outcome", "degraded"}});  // no baseline
  EXPECT_EQ(unknown.answer, Answer::kUnknown);
  EXPECT_NE(unknown.reason.find("baseline"), std::string::npos);
  EXPECT_EQ(only_check(detected_run(), {{"outcome", "exploded"}}).answer, Answer::kUnknown);  // throws
}

TEST(CheckDetectedBy, PassFailAndNothingDetected) {
  EXPECT_EQ(only_check(detected_run(), {{"detected_by", {"workload_watchdog"}}}).answer, Answer::kPass);
  EXPECT_EQ(only_check(detected_run(), {{"detected_by", {"api_error", "workload_watchdog"}}}).answer,
            Answer::kPass);
  auto fail = only_check(detected_run(), {{"detected_by", {"torch_watchdog"}}});
  EXPECT_EQ(fail.answer, Answer::kFail);
  EXPECT_NE(fail.reason.find("workload_watchdog"), std::string::npos);
  History quiet = make_history(1);
  all_exit(quiet, 1, 0);
  EXPECT_EQ(only_check(quiet, {{"detected_by", {"api_error"}}}).answer, Answer::kFail);
  EXPECT_EQ(only_check(detected_run(), {{"detected_by", 42}}).answer, Answer::kUnknown);
}

TEST(CheckDetectedBy, SimultaneousFirstDetectionsAllCount) {
  History h = detected_run();
  add_detection(h, 4.0, 2, "api_error");  // same instant as rank 0's watchdog
  EXPECT_EQ(only_check(h, {{"detected_by", {"api_error"}}}).answer, Answer::kPass);
}

TEST(CheckDetectionS, WithinBelowAboveAndUnmeasurable) {
  EXPECT_EQ(only_check(detected_run(), {{"detection_s", {{"min", 2.5}, {"max", 5.0}}}}).answer,
            Answer::kPass);
  EXPECT_EQ(only_check(detected_run(), {{"detection_s", {{"max", 2.0}}}}).answer, Answer::kFail);
  EXPECT_EQ(only_check(detected_run(), {{"detection_s", {{"min", 3.5}}}}).answer, Answer::kFail);
  History no_inject = detected_run();
  no_inject.events.erase(no_inject.events.begin());
  EXPECT_EQ(only_check(no_inject, {{"detection_s", {{"max", 5.0}}}}).answer, Answer::kUnknown);
  History quiet = make_history(1);
  add_inject(quiet, 1, 0);
  all_exit(quiet, 2, 0);
  EXPECT_EQ(only_check(quiet, {{"detection_s", {{"max", 5.0}}}}).answer, Answer::kFail);
  EXPECT_EQ(only_check(detected_run(), {{"detection_s", {{"max", "soon"}}}}).answer, Answer::kUnknown);
}

TEST(CheckRanks, AllAnyAndList) {
  EXPECT_EQ(only_check(detected_run(), {{"ranks", "all"}}).answer, Answer::kPass);
  EXPECT_EQ(only_check(detected_run(), {{"ranks", "any"}}).answer, Answer::kPass);
  EXPECT_EQ(only_check(detected_run(), {{"ranks", {0, 3}}}).answer, Answer::kPass);
  History partial = detected_run();
  partial.detections.pop_back();  // rank 3 saw nothing
  auto fail = only_check(partial, {{"ranks", "all"}});
  EXPECT_EQ(fail.answer, Answer::kFail);
  EXPECT_NE(fail.reason.find("missing 3"), std::string::npos);
  EXPECT_EQ(only_check(partial, {{"ranks", {3}}}).answer, Answer::kFail);
  History quiet = make_history(2);
  all_exit(quiet, 1, 0);
  EXPECT_EQ(only_check(quiet, {{"ranks", "any"}}).answer, Answer::kFail);
  History unknown_world = detected_run();
  unknown_world.world_size = 0;
  EXPECT_EQ(only_check(unknown_world, {{"ranks", "all"}}).answer, Answer::kUnknown);
  EXPECT_EQ(only_check(detected_run(), {{"ranks", "most"}}).answer, Answer::kUnknown);
}

TEST(CheckRanks, HarnessDeadlineDoesNotCountAsSeeing) {
  History h = make_history(1);
  h.deadline_hit = true;
  add_detection(h, 30, -1, "harness_deadline");
  add_detection(h, 30, 0, "harness_deadline");
  EXPECT_EQ(only_check(h, {{"ranks", "any"}}).answer, Answer::kFail);
}

TEST(CheckRestarts, CountsHarnessAndTorchrunRestarts) {
  History h = make_history(1);
  h.attempts = 2;
  h.torchrun_restarts = 1;
  add_exit(h, 1, 0, 3, {}, false, 0);
  add_exit(h, 2, 0, 0, {}, false, 1);
  EXPECT_EQ(only_check(h, {{"restarts", {{"min", 2}, {"max", 2}}}}).answer, Answer::kPass);
  EXPECT_EQ(only_check(h, {{"restarts", {{"max", 1}}}}).answer, Answer::kFail);
  EXPECT_EQ(only_check(h, {{"restarts", {{"min", 3}}}}).answer, Answer::kFail);
  EXPECT_EQ(only_check(h, {{"restarts", 1}}).answer, Answer::kUnknown);
}

TEST(CheckLogMatches, ReadsRankLogsUnderRunDir) {
  const auto dir = scratch_root() / "logs";
  std::filesystem::create_directories(dir / "attempt0");
  std::ofstream(dir / "attempt0" / "rank0.log") << "starting\nNCCL WARN NET/Socket : peer closed\n";
  std::ofstream(dir / "attempt0" / "rank1.log") << "watchdog: op 50 timed out after 3000 ms\n";
  History h = detected_run();
  h.rank_logs = {{"attempt0/rank0.log", "attempt0/rank1.log"}};
  JudgeOptions o;
  o.run_dir = dir.string();
  EXPECT_EQ(only_check(h, {{"log_matches", {"NCCL WARN", "timed out after \\d+ ms"}}}, o).answer,
            Answer::kPass);
  auto fail = only_check(h, {{"log_matches", {"NCCL WARN", "segfault"}}}, o);
  EXPECT_EQ(fail.answer, Answer::kFail);
  EXPECT_NE(fail.reason.find("/segfault/"), std::string::npos);
  EXPECT_EQ(only_check(h, {{"log_matches", {"([bad"}}}, o).answer, Answer::kUnknown);  // throws
  History no_logs = detected_run();
  EXPECT_EQ(only_check(no_logs, {{"log_matches", {"x"}}}, o).answer, Answer::kUnknown);
  std::filesystem::remove_all(dir);
}

TEST(CheckResult, VerifiedMismatchAndUnknown) {
  History ok = make_history(2);
  all_done(ok, 5, true);
  all_exit(ok, 5.1, 0);
  EXPECT_EQ(only_check(ok, {{"result", "verified"}}).answer, Answer::kPass);

  History bad = make_history(2);
  add_event(bad, 3, 1, "workload", "result_mismatch", {{"wrong", 5}});
  all_done(bad, 5, false);
  all_exit(bad, 5.1, 0);
  EXPECT_EQ(only_check(bad, {{"result", "verified"}}).answer, Answer::kFail);

  History partial = make_history(2);
  add_event(partial, 5, 0, "workload", "done", {{"verified", true}});
  all_exit(partial, 5.1, 0);
  EXPECT_EQ(only_check(partial, {{"result", "verified"}}).answer, Answer::kFail);

  History silent = make_history(2);  // an external command: no done events
  all_exit(silent, 5.1, 0);
  EXPECT_EQ(only_check(silent, {{"result", "verified"}}).answer, Answer::kUnknown);

  EXPECT_EQ(only_check(detected_run(), {{"result", "verified"}}).answer, Answer::kFail);
  EXPECT_EQ(only_check(ok, {{"result", "plausible"}}).answer, Answer::kUnknown);

  // Recovered: only the final attempt's data counts.
  History recovered = make_history(1);
  recovered.attempts = 2;
  add_event(recovered, 1, 0, "workload", "result_mismatch", {{"wrong", 1}}, 0);
  add_exit(recovered, 1.1, 0, 4, {}, false, 0);
  add_event(recovered, 5, 0, "workload", "done", {{"verified", true}}, 1);
  add_exit(recovered, 5.1, 0, 0, {}, false, 1);
  EXPECT_EQ(only_check(recovered, {{"result", "verified"}}).answer, Answer::kPass);
}

TEST(Judge, WorstAnswerWinsAndReasonsListNonPasses) {
  json expect = {{"outcome", "detected"},
                 {"detected_by", {"workload_watchdog"}},
                 {"detection_s", {{"min", 2.5}, {"max", 5.0}}},
                 {"ranks", "all"}};
  History h = detected_run();
  Judgement pass = judge(h, expect);
  EXPECT_EQ(pass.verdict, Answer::kPass);
  EXPECT_EQ(pass.checks.size(), 4u);
  EXPECT_EQ(pass.reasons.size(), 4u);

  expect["novel_field"] = true;  // unknown
  History h2 = detected_run();
  Judgement unknown = judge(h2, expect);
  EXPECT_EQ(unknown.verdict, Answer::kUnknown);
  ASSERT_EQ(unknown.reasons.size(), 1u);
  EXPECT_NE(unknown.reasons[0].find("novel_field"), std::string::npos);

  expect["outcome"] = "hung";  // fail beats unknown
  History h3 = detected_run();
  Judgement fail = judge(h3, expect);
  EXPECT_EQ(fail.verdict, Answer::kFail);
  EXPECT_EQ(fail.reasons.size(), 2u);
}

TEST(Judge, DegradedMarginIsASettingNotACheck) {
  auto run = [] {
    History h = make_history(1);
    h.baselines = {{1.0, steps_around(0.003, 0.05, 40)}, {1.0, steps_around(0.003, 0.05, 40)}};
    add_steps(h, steps_around(0.0039, 0.05, 40));  // +30%
    all_done(h, 2, true, 0, 1.3);
    all_exit(h, 2, 0);
    return h;
  };
  History h = run();
  Judgement j = judge(h, {{"outcome", "clean"}, {"degraded_margin", 0.5}});
  EXPECT_EQ(j.checks.size(), 1u);
  EXPECT_EQ(j.verdict, Answer::kPass);
  History h2 = run();
  EXPECT_EQ(judge(h2, {{"outcome", "degraded"}}).verdict, Answer::kPass);
}

TEST(Judge, CleanOrDegradedWithoutANoiseEstimateIsUnknown) {
  History h = make_history(1);
  h.baselines = {{1.0, {}}};  // one baseline, no steps: total time only, noise unknown
  all_done(h, 2, true, 0, 3.0);
  all_exit(h, 2, 0);
  auto check = only_check(h, {{"outcome", "degraded"}});
  EXPECT_EQ(check.answer, Answer::kUnknown);
  EXPECT_NE(check.reason.find("noise could not be estimated"), std::string::npos) << check.reason;
}

TEST(Judge, InterruptedRunIsAtBestUnknown) {
  History h = detected_run();
  h.interrupted = true;
  EXPECT_EQ(judge(h, {{"outcome", "detected"}}).verdict, Answer::kUnknown);
}

TEST(Judge, NeedsBaselineOnlyForCleanOrDegraded) {
  EXPECT_TRUE(parse_expectation({{"outcome", "degraded"}}).needs_baseline());
  EXPECT_TRUE(parse_expectation({{"outcome", {"clean", "detected"}}}).needs_baseline());
  EXPECT_FALSE(parse_expectation({{"outcome", "detected"}}).needs_baseline());
  EXPECT_FALSE(parse_expectation(json::object()).needs_baseline());
}

TEST(Judge, WorstOrdering) {
  EXPECT_EQ(worst(Answer::kPass, Answer::kUnknown), Answer::kUnknown);
  EXPECT_EQ(worst(Answer::kFail, Answer::kUnknown), Answer::kFail);
  EXPECT_EQ(worst(Answer::kPass, Answer::kPass), Answer::kPass);
}

TEST(Judge, JudgementJsonRoundTrip) {
  History h = detected_run();
  Judgement j = judge(h, {{"outcome", "detected"}});
  Judgement back = judgement_from_json(to_json(j));
  EXPECT_EQ(to_json(back), to_json(j));
}

// A hang probed by RAS: the report event as record_ras_probe leaves it.
History ras_probed_run(const json& missing, const json& lagging, bool ok = true) {
  History h = make_history(4);
  add_inject(h, 1.0, 2);
  add_event(h, 10.0, -1, "ras", "ras_report",
            {{"ok", ok},
             {"error", ok ? "" : "cannot connect to localhost:28028"},
             {"missing", missing},
             {"lagging", lagging}});
  return h;
}

TEST(CheckRasRanks, ExactSetOfNamedRanks) {
  EXPECT_EQ(only_check(ras_probed_run(json::array(), {2}), {{"ras_ranks", {2}}}).answer, Answer::kPass);
  EXPECT_EQ(only_check(ras_probed_run({3}, {2}), {{"ras_ranks", {2, 3}}}).answer, Answer::kPass);
  // Blaming a healthy rank too, or the wrong one, or nobody, fails.
  auto extra = only_check(ras_probed_run(json::array(), {0, 2}), {{"ras_ranks", {2}}});
  EXPECT_EQ(extra.answer, Answer::kFail);
  EXPECT_NE(extra.reason.find("it named 0,2"), std::string::npos) << extra.reason;
  EXPECT_EQ(only_check(ras_probed_run(json::array(), {1}), {{"ras_ranks", {2}}}).answer, Answer::kFail);
  EXPECT_EQ(only_check(ras_probed_run(json::array(), json::array()), {{"ras_ranks", {2}}}).answer,
            Answer::kFail);
}

TEST(CheckRasRanks, UnknownWithoutAReport) {
  auto none = only_check(detected_run(), {{"ras_ranks", {1}}});
  EXPECT_EQ(none.answer, Answer::kUnknown);
  EXPECT_NE(none.reason.find("no RAS report"), std::string::npos);
  auto failed = only_check(ras_probed_run(json::array(), json::array(), false), {{"ras_ranks", {2}}});
  EXPECT_EQ(failed.answer, Answer::kUnknown);
  EXPECT_NE(failed.reason.find("cannot connect"), std::string::npos) << failed.reason;
  EXPECT_EQ(only_check(ras_probed_run(json::array(), {2}), {{"ras_ranks", "all"}}).answer, Answer::kUnknown);
}

// Shared-GPU mode: a failure after ncclfi's own MPS server failed is unknown, with the server's lines;
// a pass stays a pass, and a failure without such lines stays a failure.
TEST(CheckSharedGpu, AFailureAfterTheMpsServerFailedIsUnknown) {
  History h = detected_run();
  h.own_mps = true;
  h.mps_failures = {"attempt 0, g0: [t Server 4242] Server is handling a fatal GPU error."};
  Judgement j = judge(h, json{{"outcome", "recovered"}});
  EXPECT_EQ(j.verdict, Answer::kUnknown);
  ASSERT_EQ(j.checks.size(), 2u);
  EXPECT_EQ(j.checks[0].answer, Answer::kFail);  // the failure is still shown
  EXPECT_EQ(j.checks[1].field, "shared_gpu");
  EXPECT_TRUE(j.checks[1].excuses_failure);
  EXPECT_NE(j.checks[1].reason.find("Server is handling a fatal GPU error."), std::string::npos);
  // Read back from verdict.json and settled again (as rounds do), it stays unknown.
  Judgement again = judgement_from_json(to_json(j));
  settle_verdict(again);
  EXPECT_EQ(again.verdict, Answer::kUnknown);
}

TEST(CheckSharedGpu, ARefusedRankUnderOurMpsExcusesAFailureToo) {
  History h = detected_run();
  add_event(h, 4.5, 1, "log", "log_evidence",
            {{"label", "cuda_unavailable"},
             {"line", "CUDA error: CUDA-capable device(s) is/are busy or unavailable"}});
  EXPECT_EQ(judge(h, json{{"outcome", "recovered"}}).verdict, Answer::kFail);  // not under ncclfi's MPS
  h.own_mps = true;
  const Judgement j = judge(h, json{{"outcome", "recovered"}});
  EXPECT_EQ(j.verdict, Answer::kUnknown);
  EXPECT_NE(j.checks.back().reason.find("rank 1, attempt 0: CUDA error"), std::string::npos)
      << j.checks.back().reason;
}

TEST(CheckSharedGpu, APassOrAFailureWithoutMpsTroubleIsLeftAlone) {
  History passing = detected_run();
  passing.own_mps = true;
  passing.mps_failures = {"attempt 0, g0: Server is handling a fatal GPU error."};
  const Judgement pass = judge(passing, json{{"outcome", "detected"}});
  EXPECT_EQ(pass.verdict, Answer::kPass);
  EXPECT_EQ(pass.checks.size(), 1u);
  History failing = detected_run();
  failing.own_mps = true;
  EXPECT_EQ(judge(failing, json{{"outcome", "recovered"}}).verdict, Answer::kFail);
}

// A watchdog that fired before the first injection saw the job failing on its own, not the fault: the
// outcome, the mechanisms, the first detection and the ranks leave it out, and the verdict names it as
// before the fault. Here the fault (a stop at 2 s) is then met by nothing until the deadline: hung.
TEST(BeforeTheFault, ADetectionBeforeTheFirstInjectionIsNotTheFaults) {
  History h = make_history(2);
  h.deadline_hit = true;
  add_event(h, 0.5, 1, "workload", "watchdog_fired", {{"waited_ms", 300}});
  add_detection(h, 0.5, 1, "workload_watchdog");
  add_event(h, 2.0, 0, "harness", "inject", {{"fault_id", "f1"}, {"kind", "stop"}});
  add_event(h, 30.0, -1, "harness", "deadline", {{"deadline_s", 30}});
  add_exit(h, 30.1, 0, {}, 15, true);
  add_exit(h, 30.1, 1, {}, 15, true);
  observe_exits(h);
  const json expect = {{"outcome", "detected"}, {"detected_by", {"workload_watchdog"}}, {"ranks", "any"}};
  const Judgement j = judge(h, expect);
  EXPECT_EQ(j.outcome, Outcome::kHung) << j.outcome_reason;
  EXPECT_NE(j.outcome_reason.find("before the fault: workload_watchdog on rank 1"), std::string::npos)
      << j.outcome_reason;
  EXPECT_EQ(std::count(j.mechanisms.begin(), j.mechanisms.end(), "workload_watchdog"), 0);
  ASSERT_TRUE(j.first_detection.has_value());
  EXPECT_EQ(j.first_detection->mechanism, "harness_deadline");
  EXPECT_EQ(j.verdict, Answer::kFail);
  std::map<std::string, const CheckResult*> by_field;
  for (const auto& c : j.checks) by_field[c.field] = &c;
  for (const char* field : {"outcome", "detected_by", "ranks"}) {
    ASSERT_TRUE(by_field.count(field)) << field;
    EXPECT_EQ(by_field[field]->answer, Answer::kFail) << field << ": " << by_field[field]->reason;
  }
  ASSERT_TRUE(by_field.count("before_fault"));
  EXPECT_EQ(by_field["before_fault"]->answer, Answer::kPass);
  EXPECT_NE(by_field["before_fault"]->reason.find("workload_watchdog on rank 1"), std::string::npos)
      << by_field["before_fault"]->reason;
  // The same watchdog at the injection's moment or after it is the fault's detection.
  History after = make_history(2);
  add_event(after, 2.0, 0, "harness", "inject", {{"fault_id", "f1"}, {"kind", "stop"}});
  add_detection(after, 2.0, 1, "workload_watchdog");
  all_exit(after, 2.5, 3);
  const Judgement k = judge(after, expect);
  EXPECT_EQ(k.outcome, Outcome::kDetected) << k.outcome_reason;
  EXPECT_EQ(k.verdict, Answer::kPass);
  for (const auto& c : k.checks) EXPECT_NE(c.field, "before_fault");
}

}  // namespace
}  // namespace ncclfi::harness
