// One test per outcome rule (docs/scenarios.md), the timing comparison against noise, and detection latency.
#include <gtest/gtest.h>

#include "history_builder.h"
#include "judge.h"
#include "observe.h"

namespace ncclfi::harness {
namespace {
using namespace testing;

// A finished run of `steps` after baselines of `baselines` (per run, its step durations).
History finished_run(const std::vector<double>& steps, const std::vector<std::vector<double>>& baselines) {
  History h = make_history(2);
  for (const auto& b : baselines) h.baselines.push_back({5.0, b});
  add_steps(h, steps);
  all_done(h, 5, true);
  all_exit(h, 5.1, 0);
  return h;
}

TEST(Outcome, DegradedWhenEveryStepIsSlowerBeyondMarginAndNoise) {
  const History h = finished_run(steps_around(0.012, 0.1, 60),
                                 {steps_around(0.003, 0.1, 60), steps_around(0.003, 0.1, 60)});
  std::string why;
  std::vector<TimingComparison> timing;
  EXPECT_EQ(decide_outcome(h, 0.2, &why, &timing), Outcome::kDegraded);
  EXPECT_NE(why.find("median step"), std::string::npos) << why;
  EXPECT_NE(why.find("+300%"), std::string::npos) << why;
  EXPECT_NE(why.find("noise \u00b1"), std::string::npos) << why;
  ASSERT_EQ(timing.size(), 2u);
  ASSERT_TRUE(timing[0].noise);
  EXPECT_LT(*timing[0].noise, 0.2);
}

TEST(Outcome, CleanWhenTheRunIsWithinTheBaselinesSpread) {
  // A +30% median looks like more than the 20% margin, but the two baselines differ by 40% from
  // each other: the host is that noisy, and +30% is within it.
  const History h = finished_run(steps_around(0.0039, 0.1, 60),
                                 {steps_around(0.0025, 0.1, 60), steps_around(0.0035, 0.1, 60)});
  std::string why;
  std::vector<TimingComparison> timing;
  EXPECT_EQ(decide_outcome(h, 0.2, &why, &timing), Outcome::kClean) << why;
  ASSERT_FALSE(timing.empty());
  EXPECT_GT(timing[0].effect, 0.2);
  EXPECT_GT(*timing[0].noise, timing[0].effect);
  EXPECT_NE(why.find("within the noise"), std::string::npos) << why;
  // Clean as far as the judge can see, but the run was slower than the margin, within a noise (40%)
  // wider than it: neither a `clean` nor a `degraded` expectation can be told from it, and the
  // baselines' own spread means more samples would not help.
  for (const char* expected : {"clean", "degraded"}) {
    History copy = h;
    const Judgement j = judge(copy, nlohmann::json{{"outcome", expected}});
    EXPECT_EQ(j.verdict, Answer::kUnknown) << expected;
    EXPECT_NE(j.reasons.front().find("wider than the 20% margin"), std::string::npos) << j.reasons.front();
    EXPECT_NE(j.reasons.front().find("a quieter host"), std::string::npos) << j.reasons.front();
  }
}

TEST(Outcome, NoiseWiderThanTheMarginCannotFailADegradedExpectation) {
  // A +5% run beside baselines whose steps scatter so widely that the sampling noise is far over the
  // 20% margin: the README's first drill on a busy 2-core host. A fail of an expected `degraded` is a
  // guess here. The reason says how many more steps would narrow the noise.
  const History h = finished_run(steps_around(0.00315, 0.95, 12),
                                 {steps_around(0.003, 0.95, 12), steps_around(0.003, 0.95, 12)});
  std::string why;
  std::vector<TimingComparison> timing;
  ASSERT_EQ(decide_outcome(h, 0.2, &why, &timing), Outcome::kClean) << why;
  ASSERT_FALSE(timing.empty());
  ASSERT_TRUE(timing[0].noise);
  ASSERT_GT(*timing[0].noise, 0.2);
  ASSERT_LE(timing[0].effect, 0.2);
  History copy = h;
  const Judgement j = judge(copy, nlohmann::json{{"outcome", "degraded"}});
  EXPECT_EQ(j.verdict, Answer::kUnknown) << j.reasons.front();
  EXPECT_NE(j.reasons.front().find("cannot be told apart"), std::string::npos) << j.reasons.front();
  EXPECT_NE(j.reasons.front().find("x its 12 steps"), std::string::npos) << j.reasons.front();
  // The run's own figures are within the margin: an expected `clean` passes (nothing shows a slow-down).
  copy = h;
  EXPECT_EQ(judge(copy, nlohmann::json{{"outcome", "clean"}}).verdict, Answer::kPass);
  // A fault expected to be detected is not a timing question: clean stays a fail there.
  copy = h;
  EXPECT_EQ(judge(copy, nlohmann::json{{"outcome", "detected"}}).verdict, Answer::kFail);
}

TEST(Outcome, CleanWithinTheMarginSaysSo) {
  const History h = finished_run(steps_around(0.0031, 0.1, 60),
                                 {steps_around(0.003, 0.1, 60), steps_around(0.003, 0.1, 60)});
  std::string why;
  EXPECT_EQ(decide_outcome(h, 0.2, &why), Outcome::kClean);
  EXPECT_NE(why.find("within the margin 20%"), std::string::npos) << why;
  History copy = h;
  EXPECT_EQ(judge(copy, nlohmann::json{{"outcome", "degraded"}}).verdict, Answer::kFail);
}

TEST(Outcome, CleanWhenABigRatioSitsInLargeNoise) {
  // Steps spread over 0.1x-1.9x of their centre: +33%, beyond the 20% margin, is within the
  // sampling noise of so few, so scattered steps.
  const History h = finished_run(steps_around(0.004, 0.9, 12), {steps_around(0.003, 0.9, 12)});
  std::string why;
  EXPECT_EQ(decide_outcome(h, 0.2, &why), Outcome::kClean) << why;
}

TEST(Outcome, DegradedWhenOneStepStalls) {
  std::vector<double> steps = steps_around(0.003, 0.1, 60);
  steps[30] = 2.0;  // one 2 s stall: the median does not move, the mean does
  const History h = finished_run(steps, {steps_around(0.003, 0.1, 60), steps_around(0.003, 0.1, 60)});
  std::string why;
  EXPECT_EQ(decide_outcome(h, 0.2, &why), Outcome::kDegraded);
  EXPECT_NE(why.find("mean step"), std::string::npos) << why;
}

TEST(Outcome, WithinMarginIsCleanEvenWhenBeyondNoise) {
  const History h = finished_run(steps_around(0.0033, 0.01, 100),
                                 {steps_around(0.003, 0.01, 100), steps_around(0.003, 0.01, 100)});
  EXPECT_EQ(decide_outcome(h, 0.2), Outcome::kClean);  // +10%: real, but under the margin
  EXPECT_EQ(decide_outcome(h, 0.05), Outcome::kDegraded);
}

TEST(Outcome, FewStepsFallBackToTotalsWhoseNoiseNeedsTwoBaselines) {
  History h = make_history(2);
  h.baselines.push_back({5.0, {}});
  all_done(h, 5, true, 0, 8.0);  // +60% total time
  all_exit(h, 8.1, 0);
  std::vector<TimingComparison> timing;
  EXPECT_EQ(decide_outcome(h, 0.2, nullptr, &timing), Outcome::kDegraded);
  ASSERT_EQ(timing.size(), 1u);
  EXPECT_EQ(timing[0].statistic, "total time");
  EXPECT_FALSE(timing[0].noise);  // one baseline: no spread to estimate
  History two = h;
  two.baselines.push_back({7.0, {}});  // the baselines themselves differ by 40%
  EXPECT_EQ(decide_outcome(two, 0.2, nullptr, &timing), Outcome::kClean);  // +33% vs their mean, noise 40%
  ASSERT_TRUE(timing[0].noise);
  EXPECT_NEAR(*timing[0].noise, 0.4, 1e-9);
}

TEST(Outcome, StepDurationsTakeTheSlowestRankPerSeqAndSkipWarmup) {
  History h = make_history(2);
  add_event(h, 1, 0, "workload", "op", {{"seq", 0}, {"dur_us", 900}, {"warmup", true}});
  add_event(h, 1, 0, "workload", "op", {{"seq", 1}, {"dur_us", 1000}});
  add_event(h, 1, 1, "workload", "op", {{"seq", 1}, {"dur_us", 3000}});
  add_event(h, 2, 0, "workload", "step", {{"seq", 2}, {"dur_ms", 2}});
  const auto steps = step_durations(h, 0);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_DOUBLE_EQ(steps[0], 0.003);
  EXPECT_DOUBLE_EQ(steps[1], 0.002);
  auto perf = measure_performance(h);
  ASSERT_TRUE(perf.slowest_step_s);
  EXPECT_DOUBLE_EQ(*perf.slowest_step_s, 0.003);
}

TEST(Outcome, CleanWithoutBaselineSaysSo) {
  History h = make_history(1);
  all_exit(h, 1, 0);
  std::string why;
  EXPECT_EQ(decide_outcome(h, 0.2, &why), Outcome::kClean);
  EXPECT_NE(why.find("no baseline"), std::string::npos);
}

TEST(Outcome, DetectedWhenJobStoppedAndSomethingNoticed) {
  History h = make_history(2);
  add_inject(h, 1, 1);
  add_event(h, 4, 0, "workload", "watchdog_fired", {{"waited_ms", 3000}});
  add_detection(h, 4, 0, "workload_watchdog");
  all_exit(h, 4.1, 3);
  EXPECT_EQ(decide_outcome(h, 0.2), Outcome::kDetected);
}

TEST(Outcome, DetectedEvenIfTheDeadlineHadToKillAfterADetection) {
  History h = make_history(2);
  h.deadline_hit = true;
  add_detection(h, 4, 0, "torch_watchdog");
  add_exit(h, 30, 0, {}, 9, true);
  add_exit(h, 30, 1, {}, 9, true);
  observe_exits(h);
  History sorted = h;
  sort_history(sorted);
  EXPECT_EQ(decide_outcome(sorted, 0.2), Outcome::kDetected);
}

TEST(Outcome, HungWhenOnlyTheDeadlineEndedIt) {
  History h = make_history(2);
  h.deadline_hit = true;
  add_inject(h, 1, 1);
  add_exit(h, 30, 0, {}, 15, true);
  add_exit(h, 30, 1, {}, 15, true);
  observe_exits(h);
  std::string why;
  EXPECT_EQ(decide_outcome(h, 0.2, &why), Outcome::kHung);
  EXPECT_NE(why.find("deadline"), std::string::npos);
}

TEST(Outcome, SilentCorruptionWhenFinishedWithMismatch) {
  History h = make_history(2);
  add_event(h, 2, 1, "workload", "result_mismatch", {{"wrong", 3}, {"checked", 100}});
  all_done(h, 5, false);
  all_exit(h, 5.1, 0);
  EXPECT_EQ(decide_outcome(h, 0.2), Outcome::kSilentCorruption);
}

TEST(Outcome, SilentCorruptionWhenFinishedWithNaN) {
  History h = make_history(1);
  add_event(h, 2, 0, "workload", "nan_detected", {{"step", 5}});
  all_exit(h, 5.1, 0);
  EXPECT_EQ(decide_outcome(h, 0.2), Outcome::kSilentCorruption);
}

TEST(Outcome, RecoveredAfterHarnessRestart) {
  History h = make_history(2);
  h.attempts = 2;
  add_inject(h, 1, 1);
  add_detection(h, 4, 0, "workload_watchdog");
  all_exit(h, 4.1, 3, 0);
  all_done(h, 9, true, 1);
  all_exit(h, 9.1, 0, 1);
  std::string why;
  EXPECT_EQ(decide_outcome(h, 0.2, &why), Outcome::kRecovered);
  EXPECT_NE(why.find("1 restart"), std::string::npos);
}

TEST(Outcome, RecoveredAfterTorchrunRestart) {
  History h = make_history(1);
  h.torchrun_restarts = 1;
  add_detection(h, 4, 0, "torch_watchdog");
  all_exit(h, 9, 0);
  EXPECT_EQ(decide_outcome(h, 0.2), Outcome::kRecovered);
}

// Recent torchrun logs its restart line only at INFO level: the restart is read from the workers'
// `restart_count` at start, counted once per restart however many ranks report it.
TEST(Outcome, RecoveredAfterTorchrunRestartSeenOnlyByTheWorkers) {
  History h = make_history(2);
  add_event(h, 0.1, 0, "workload", "start", {{"restart_count", 0}});
  add_event(h, 0.1, 1, "workload", "start", {{"restart_count", 0}});
  add_detection(h, 4, -1, "launcher_teardown");
  add_event(h, 5, 0, "workload", "start", {{"restart_count", 1}});
  add_event(h, 5, 1, "workload", "start", {{"restart_count", 1}});
  all_exit(h, 9, 0);
  std::string why;
  EXPECT_EQ(decide_outcome(h, 0.2, &why), Outcome::kRecovered);
  EXPECT_NE(why.find("1 restart"), std::string::npos);
  Judgement j = judge(h, {{"outcome", "recovered"}, {"restarts", {{"min", 1}, {"max", 1}}}});
  EXPECT_EQ(j.restarts, 1);
  EXPECT_EQ(j.verdict, Answer::kPass);
}

// cpu-ring under torchrun reports the same count, from its own source.
TEST(Outcome, TorchrunRestartCountedFromCpuRingWorkers) {
  History h = make_history(2);
  add_event(h, 0.1, 0, "cpu-ring", "start", {{"restart_count", 0}});
  add_event(h, 5, 0, "cpu-ring", "start", {{"restart_count", 1}});
  add_event(h, 5, 1, "cpu-ring", "start", {{"restart_count", 1}});
  all_exit(h, 9, 0);
  EXPECT_EQ(decide_outcome(h, 0.2), Outcome::kRecovered);
  EXPECT_EQ(judge(h, {{"outcome", "recovered"}}).restarts, 1);
}

TEST(Outcome, NoRestartWhenWorkersStartOnce) {
  History h = make_history(2);
  add_event(h, 0.1, 0, "workload", "start", {{"restart_count", 0}});
  add_event(h, 0.1, 1, "workload", "start", {{"restart_count", 0}});
  all_exit(h, 9, 0);
  EXPECT_EQ(decide_outcome(h, 0.2), Outcome::kClean);
}

TEST(Outcome, RestartThatFailsAgainIsDetected) {
  History h = make_history(1);
  h.attempts = 2;
  add_detection(h, 4, 0, "workload_watchdog", 0);
  add_exit(h, 4, 0, 3, {}, false, 0);
  add_detection(h, 8, 0, "workload_watchdog", 1);
  add_exit(h, 8, 0, 3, {}, false, 1);
  EXPECT_EQ(decide_outcome(h, 0.2), Outcome::kDetected);
}

TEST(Latency, FirstInjectionToFirstDetectionAtOrAfterIt) {
  History h = make_history(2);
  add_detection(h, 0.5, 0, "api_error");  // before any injection: not the first detection
  add_inject(h, 2.0, 1);
  add_inject(h, 2.5, 1);
  add_detection(h, 6.0, 1, "async_error");
  add_detection(h, 5.25, 0, "workload_watchdog");
  all_exit(h, 6.1, 3);
  Judgement j = judge(h, nlohmann::json::object());
  ASSERT_TRUE(j.first_injection_ns);
  EXPECT_EQ(*j.first_injection_ns, at(2.0));
  ASSERT_TRUE(j.first_detection);
  EXPECT_EQ(j.first_detection->mechanism, "workload_watchdog");
  ASSERT_TRUE(j.detection_s);
  EXPECT_NEAR(*j.detection_s, 3.25, 1e-9);
  // The api_error came before the fault: not among the fault's detecting mechanisms.
  EXPECT_EQ(j.mechanisms, (std::vector<std::string>{"workload_watchdog", "async_error"}));
  EXPECT_EQ(j.verdict, Answer::kUnknown);  // no expectation
}

TEST(Latency, NoInjectionMeansNoLatency) {
  History h = make_history(1);
  add_detection(h, 1, 0, "api_error");
  add_exit(h, 1, 0, 2);
  Judgement j = judge(h, nlohmann::json::object());
  EXPECT_TRUE(j.first_detection);
  EXPECT_FALSE(j.detection_s);
}

TEST(Attempts, SharedEventLogIsSplitByHarnessLaunches) {
  History h = make_history(1);
  h.attempts = 2;
  add_event(h, 0, -1, "harness", "launch", {}, 0);
  add_event(h, 5, -1, "harness", "launch", {}, 1);
  add_event(h, 6, 0, "workload", "done", {{"verified", true}, {"seconds", 1.0}});  // read with attempt 0
  add_exit(h, 4, 0, 3, {}, false, 0);
  add_exit(h, 7, 0, 0, {}, false, 1);
  Judgement j = judge(h, {{"result", "verified"}});
  EXPECT_EQ(h.events.back().attempt, 1);
  EXPECT_EQ(j.checks[0].answer, Answer::kPass) << j.checks[0].reason;
}

}  // namespace
}  // namespace ncclfi::harness

namespace ncclfi::harness {
namespace {
using namespace testing;

// Seen on a real run of proc-stop-all-hung: the teardown's SIGTERM/SIGCONT woke a frozen rank whose
// watchdog then fired; the run is still hung, detected only by the deadline, timed at the deadline.
TEST(Outcome, DetectionsWokenByTheDeadlineTeardownDoNotCount) {
  History h = make_history(2);
  h.deadline_hit = true;
  add_inject(h, 1.0, 0, "stop");
  add_inject(h, 1.0, 1, "stop");
  add_event(h, 6.0, -1, "harness", "deadline", {{"deadline_s", 6}});
  add_event(h, 6.001, 1, "cpu-ring", "watchdog_fired", {{"waited_ms", 5001}});
  add_detection(h, 6.001, 1, "workload_watchdog");
  add_exit(h, 6.006, 0, {}, 15, true);
  add_exit(h, 6.012, 1, 3, {}, true);
  observe_exits(h);
  Judgement j = judge(h, {{"outcome", "hung"},
                          {"detected_by", {"harness_deadline"}},
                          {"detection_s", {{"min", 4.5}, {"max", 6}}},
                          {"ranks", "any"}});
  EXPECT_EQ(j.outcome, Outcome::kHung) << j.outcome_reason;
  ASSERT_TRUE(j.first_detection);
  EXPECT_EQ(j.first_detection->mechanism, "harness_deadline");
  EXPECT_EQ(j.first_detection->ts_ns, at(6.0));
  EXPECT_NEAR(*j.detection_s, 5.0, 1e-9);
  EXPECT_EQ(j.mechanisms, std::vector<std::string>{"harness_deadline"});
  ASSERT_EQ(j.checks.size(), 4u);
  for (const auto& c : j.checks) {
    if (c.field == "ranks")
      EXPECT_EQ(c.answer, Answer::kFail) << c.reason;  // nobody saw it
    else
      EXPECT_EQ(c.answer, Answer::kPass) << c.field << ": " << c.reason;
  }
}

}  // namespace
}  // namespace ncclfi::harness
