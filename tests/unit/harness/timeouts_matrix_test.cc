// The timeout matrix without running anything: how a trial's record is read, how trials make a cell,
// the findings (a setting that never detects a hang, false alarms) and the recommended timeout.
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "ncclfi/event_log.h"
#include "timeouts_matrix.h"

namespace ncclfi::cli {
namespace {

using harness::Detection;
using harness::HistoryEvent;
using harness::RankExit;
using harness::RunRecord;
using nlohmann::json;

constexpr int64_t kSec = 1'000'000'000;

HistoryEvent event(const std::string& source, const std::string& name, double at_s,
                   json fields = json::object()) {
  HistoryEvent e;
  e.source = source;
  e.event = name;
  e.ts_ns = static_cast<int64_t>(at_s * kSec);
  e.fields = std::move(fields);
  return e;
}

// A run where the fault fires at 10 s and, when `detected_at_s` is set, `mechanism` notices it then.
RunRecord trial(std::optional<double> detected_at_s, const std::string& mechanism = "torch_watchdog",
                bool deadline = false) {
  RunRecord r;
  r.run_dir = "/runs/x";
  r.history.start_ns = 0;
  r.history.events.push_back(event("preload", ev::kInject, 10));
  r.judgement.first_injection_ns = 10 * kSec;
  if (detected_at_s) {
    Detection d{mechanism, 0, 0, static_cast<int64_t>(*detected_at_s * kSec), "line"};
    r.history.detections.push_back(d);
    r.judgement.first_detection = d;
    r.judgement.detection_s = *detected_at_s - 10;
    r.judgement.outcome = harness::Outcome::kDetected;
  }
  r.history.deadline_hit = deadline;
  if (deadline && !detected_at_s) {
    Detection d{"harness_deadline", -1, 0, 60 * kSec, "deadline"};
    r.history.detections.push_back(d);
    r.judgement.first_detection = d;
    r.judgement.outcome = harness::Outcome::kHung;
  }
  return r;
}

TEST(ReadTrial, ADetectionIsTimedAndTheExitsGiveTheTimeUntilGone) {
  RunRecord r = trial(20.5);
  RankExit x;
  x.attempt = 0;
  x.ts_ns = 22 * kSec;
  x.exit_code = 1;
  r.history.exits.push_back(x);
  const TrialResult t = read_trial(r, MatrixFault::kGpuHang);
  EXPECT_TRUE(t.fired);
  EXPECT_TRUE(t.detected);
  EXPECT_FALSE(t.hung);
  EXPECT_FALSE(t.false_alarm);
  EXPECT_EQ(t.mechanism, "torch_watchdog");
  EXPECT_DOUBLE_EQ(*t.detection_s, 10.5);
  EXPECT_DOUBLE_EQ(*t.gone_s, 1.5);
  EXPECT_FALSE(t.resumed_s);
}

TEST(ReadTrial, TheHarnessDeadlineIsNotADetectionButAHang) {
  RunRecord r = trial(std::nullopt, "", true);
  RankExit x;
  x.ts_ns = 61 * kSec;
  x.killed_by_harness = true;
  r.history.exits.push_back(x);
  const TrialResult t = read_trial(r, MatrixFault::kHostHang);
  EXPECT_TRUE(t.fired);
  EXPECT_FALSE(t.detected);
  EXPECT_TRUE(t.hung);
  EXPECT_FALSE(t.gone_s);
}

TEST(ReadTrial, KilledByTheHarnessAfterADetectionIsNotGone) {
  RunRecord r = trial(20);
  RankExit x;
  x.ts_ns = 61 * kSec;
  x.killed_by_harness = true;
  r.history.exits.push_back(x);
  const TrialResult t = read_trial(r, MatrixFault::kGpuHang);
  EXPECT_FALSE(t.gone_s);  // the job detected but did not end by itself
  EXPECT_TRUE(t.left_running);
  const Cell cell{"no-handling", MatrixFault::kGpuHang, {t}};
  EXPECT_EQ(cell.text(), "detected 1/1 torch_watchdog 10.0 s, still running at the deadline 1/1");
  const auto findings = matrix_findings({{"no-handling", "", {}, {}, {}, {}}}, {cell}, {});
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0],
            "setting no-handling detected gpu_hang (torch_watchdog) but nothing ended the job in 1/1 trials: "
            "it ran "
            "until the harness's deadline");
}

TEST(ReadTrial, ADetectedStallIsAFalseAlarm) {
  EXPECT_TRUE(read_trial(trial(16), MatrixFault::kStall).false_alarm);
  EXPECT_FALSE(read_trial(trial(std::nullopt), MatrixFault::kStall).false_alarm);
}

TEST(ReadTrial, AFaultThatNeverFiredIsNeitherDetectedNorHung) {
  RunRecord r = trial(std::nullopt, "", true);
  r.judgement.first_injection_ns.reset();
  const TrialResult t = read_trial(r, MatrixFault::kGpuHang);
  EXPECT_FALSE(t.fired);
  EXPECT_FALSE(t.hung);
  EXPECT_FALSE(t.detected);
}

TEST(ReadTrial, TrainingResumesAtTheFirstStepAfterARestart) {
  RunRecord r = trial(20);
  r.history.events.push_back(event("workload", ev::kOp, 15, {{"op", "train_step"}}));  // before: not it
  r.history.events.push_back(event("workload", "start", 25));
  r.history.events.push_back(event("workload", ev::kOp, 31, {{"op", "train_step"}}));
  EXPECT_DOUBLE_EQ(*read_trial(r, MatrixFault::kDeadRank).resumed_s, 11);
}

TEST(Cell, TextSaysWhatHappenedInEachTrial) {
  Cell hang{"abort", MatrixFault::kGpuHang, {}};
  hang.trials = {read_trial(trial(20), MatrixFault::kGpuHang), read_trial(trial(21), MatrixFault::kGpuHang),
                 read_trial(trial(std::nullopt, "", true), MatrixFault::kGpuHang)};
  EXPECT_EQ(hang.fired(), 3);
  EXPECT_EQ(hang.detected(), 2);
  EXPECT_EQ(hang.hung(), 1);
  EXPECT_EQ(hang.text(), "detected 2/3 torch_watchdog 10.5 s (max 11.0 s), HUNG 1/3");
  Cell stall{"abort", MatrixFault::kStall, {read_trial(trial(std::nullopt), MatrixFault::kStall)}};
  EXPECT_EQ(stall.text(), "survived 1/1");
  Cell alarm{"tight", MatrixFault::kStall, {read_trial(trial(12), MatrixFault::kStall)}};
  EXPECT_EQ(alarm.text(), "FALSE ALARM 1/1 torch_watchdog 2.00 s");
  RunRecord unfired = trial(std::nullopt);
  unfired.judgement.first_injection_ns.reset();
  Cell none{"abort", MatrixFault::kNetError, {read_trial(unfired, MatrixFault::kNetError)}};
  EXPECT_EQ(none.text(), "fault never fired 0/1");
}

HealthyProfile healthy_with_steps(std::vector<double> steps) {
  RunRecord r;
  r.judgement.performance.steps_s = std::move(steps);
  return profile_healthy({r});
}

TEST(Recommendation, IsTheMarginTimesTheLargestHealthyStep) {
  const HealthyProfile p = healthy_with_steps({0.5, 0.6, 2.0, 0.55});
  EXPECT_DOUBLE_EQ(*p.largest_step_s, 2.0);
  const Recommendation rec = recommend_timeout(p, 3.0);
  ASSERT_TRUE(rec.timeout_s);
  EXPECT_DOUBLE_EQ(*rec.timeout_s, 6.0);  // not the median's multiple (1.7): the slowest step decides
  EXPECT_NE(
      rec.text.find("6.00 s = 3.0 x the largest healthy step (2.00 s, over 4 steps in 1 healthy trials)"),
      std::string::npos)
      << rec.text;
  EXPECT_FALSE(recommend_timeout(healthy_with_steps({}), 3.0).timeout_s);
}

TEST(Recommendation, ALongerOpOfTheJobWins) {
  RunRecord r;
  r.judgement.performance.steps_s = {1.0};
  r.history.events.push_back(event("workload", ev::kOp, 5, {{"op", "checkpoint_barrier"}, {"dur_us", 4e6}}));
  const Recommendation rec = recommend_timeout(profile_healthy({r}), 2.0);
  EXPECT_DOUBLE_EQ(*rec.timeout_s, 8.0);
}

// The preload's op_time (NCCLFI_TIME_OPS on the healthy runs): the longest collective, call to completion.
TEST(Recommendation, TheLongestTimedCollectiveCounts) {
  RunRecord r;
  r.judgement.performance.steps_s = {0.2};
  r.history.events.push_back(event("preload", ev::kOpTime, 5, {{"op", "allreduce"}, {"dur_us", 1.5e6}}));
  r.history.events.push_back(event("preload", ev::kOpTime, 6, {{"op", "allreduce"}, {"dur_us", 9e4}}));
  r.history.events.push_back(
      event("preload", ev::kOpTrace, 7, {{"op", "allreduce"}, {"dur_us", 9e6}}));  // not a time
  const HealthyProfile p = profile_healthy({r});
  ASSERT_TRUE(p.longest_op_s);
  EXPECT_DOUBLE_EQ(*p.longest_op_s, 1.5);
  // A longer one the history folded away (only its maximum kept) still counts.
  r.history.longest_op_us = 2.5e6;
  EXPECT_DOUBLE_EQ(*profile_healthy({r}).longest_op_s, 2.5);
  EXPECT_DOUBLE_EQ(*recommend_timeout(p, 2.0).timeout_s, 3.0);
}

// NCCL's IB retry budget, 4.096 us x 2^NCCL_IB_TIMEOUT x (NCCL_IB_RETRY_CNT + 1), must exceed the same
// margin x the largest healthy step as the collective timeout. Largest step 2 s x 3.0 = 6 s: 2^17 gives
// 4.29 s, 2^18 gives 8.59 s with NCCL's default 7 retries.
TEST(IbTimeoutRecommendation, IsTheSmallestExponentWhoseRetryBudgetExceedsTheMarginTimesTheLargestStep) {
  const Recommendation rec = recommend_timeout(healthy_with_steps({0.5, 2.0, 0.7}), 3.0);
  ASSERT_TRUE(rec.ib_need_s);
  EXPECT_DOUBLE_EQ(*rec.ib_need_s, 6.0);
  ASSERT_TRUE(rec.ib_timeout);
  EXPECT_EQ(*rec.ib_timeout, 18);
  ASSERT_TRUE(rec.ib_budget_s);
  EXPECT_NEAR(*rec.ib_budget_s, 8.5899, 1e-3);
  EXPECT_NE(rec.ib_text.find("recommended NCCL_IB_TIMEOUT: at least 18 (retry budget 4.096 us x 2^18 x "
                             "(NCCL_IB_RETRY_CNT 7 + 1) = 8.59 s"),
            std::string::npos)
      << rec.ib_text;
  // Strictly above: a budget equal to the need is not enough (2^17 x 8 tries is 4.29496 s).
  EXPECT_EQ(min_ib_timeout(4.29496, 7), 18);
  EXPECT_EQ(min_ib_timeout(4.29, 7), 17);
  // Fewer retries need a longer timeout per try: 4 tries of 2^19.
  EXPECT_EQ(min_ib_timeout(6.0, 3), 19);
  EXPECT_EQ(min_ib_timeout(0.001, 7), 5);  // 4.096 us x 32 x 8 = 1.05 ms
  EXPECT_FALSE(min_ib_timeout(1e6, 7));    // beyond 2^31: nothing clears it
  EXPECT_FALSE(recommend_timeout(healthy_with_steps({}), 3.0).ib_timeout);
}

TEST(IbTimeoutRecommendation, ASettingWhoseBudgetIsNotAboveItIsAFinding) {
  const Recommendation rec = recommend_timeout(healthy_with_steps({2.0}), 3.0);  // needs 6 s: 18
  const std::vector<TimeoutSetting> settings = {
      {"short", "", {}, {{"NCCL_IB_TIMEOUT", "17"}}, {}, {}},
      {"enough", "", {}, {{"NCCL_IB_TIMEOUT", "18"}}, {}, {}},
      {"few-retries", "", {}, {{"NCCL_IB_TIMEOUT", "18"}, {"NCCL_IB_RETRY_CNT", "2"}}, {}, {}},
      {"retries-only", "", {}, {{"NCCL_IB_RETRY_CNT", "0"}}, {}, {}},  // 2^20 once: 4.29 s
      {"unset", "", {}, {{"TORCH_NCCL_ASYNC_ERROR_HANDLING", "1"}}, {}, {}},
      {"never", "", {}, {{"NCCL_IB_TIMEOUT", "0"}}, {}, {}},  // the verbs spec: no timeout at all
  };
  std::set<std::string> flagged;
  for (const auto& s : settings) {
    if (ib_timeout_finding(s, rec)) flagged.insert(s.name);
  }
  EXPECT_EQ(flagged, (std::set<std::string>{"short", "few-retries", "retries-only"}));
  const auto finding = ib_timeout_finding(settings[0], rec);
  ASSERT_TRUE(finding);
  EXPECT_EQ(*finding,
            "setting short sets NCCL_IB_TIMEOUT=17 with NCCL_IB_RETRY_CNT=7: NCCL's IB retry budget (4.29 s) "
            "is not above the recommended 6.00 s (NCCL_IB_TIMEOUT 18 or more): a slow healthy step may fail "
            "its queue pairs with IBV_WC_RETRY_EXC_ERR");
  const auto findings = matrix_findings(settings, {}, rec);
  EXPECT_EQ(findings.size(), 3u);
  EXPECT_EQ(findings[0], *finding);
  // Without a healthy step there is nothing to compare with.
  EXPECT_FALSE(ib_timeout_finding(settings[0], recommend_timeout(healthy_with_steps({}), 3.0)));
}

TEST(Findings, NameTheSettingThatNeverDetectsAHangAndTheFalseAlarms) {
  std::vector<TimeoutSetting> settings = {{"abort", "", {}, {}, {}, 10.0},
                                          {"no-handling", "", {}, {}, {}, 2.0}};
  auto hung = [] { return read_trial(trial(std::nullopt, "", true), MatrixFault::kGpuHang); };
  std::vector<Cell> cells = {
      {"abort", MatrixFault::kGpuHang, {read_trial(trial(20), MatrixFault::kGpuHang)}},
      {"abort", MatrixFault::kHostHang, {read_trial(trial(20), MatrixFault::kHostHang)}},
      {"no-handling", MatrixFault::kGpuHang, {hung(), hung()}},
      {"no-handling", MatrixFault::kHostHang, {hung()}},
      {"no-handling", MatrixFault::kStall, {read_trial(trial(13), MatrixFault::kStall)}},
  };
  const Recommendation rec = recommend_timeout(healthy_with_steps({1.0}), 3.0);
  const auto findings = matrix_findings(settings, cells, rec);
  ASSERT_EQ(findings.size(), 3u) << json(findings).dump(2);
  EXPECT_EQ(
      findings[0],
      "setting no-handling never detected gpu_hang and host_hang: the job stays hung until something outside "
      "kills it");
  EXPECT_EQ(findings[1],
            "setting no-handling raised a false alarm on a survivable stall in 1/1 trials (torch_watchdog)");
  EXPECT_EQ(findings[2],
            "setting no-handling declares a timeout of 2.00 s, under the recommended 3.00 s: a slow healthy "
            "step may "
            "trip it");
}

TEST(Findings, AHangDetectedOnceIsNotNever) {
  std::vector<TimeoutSetting> settings = {{"flaky", "", {}, {}, {}, {}}};
  std::vector<Cell> cells = {{"flaky",
                              MatrixFault::kGpuHang,
                              {read_trial(trial(std::nullopt, "", true), MatrixFault::kGpuHang),
                               read_trial(trial(20), MatrixFault::kGpuHang)}}};
  EXPECT_TRUE(matrix_findings(settings, cells, {}).empty());
}

TEST(Settings, ParsedWithErrorsThatNameTheField) {
  const json doc = {
      {"settings",
       {{{"name", "a"}, {"params", {{"pg_timeout_s", 5}}}, {"env", {{"X", "1"}}}, {"max_restarts", 2}}}}};
  const auto s = parse_timeout_settings(doc, "s.json");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].params.at("pg_timeout_s"), 5);
  EXPECT_EQ(*s[0].max_restarts, 2);
  auto error_of = [](const json& d) {
    try {
      parse_timeout_settings(d, "s.json");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error_of({{"settings", json::array()}}),
            "s.json: /settings: expected a non-empty array of settings, got an array");
  EXPECT_NE(error_of({{"settings", {{{"name", "a"}, {"env", {{"X", 1}}}}}}})
                .find("s.json: /settings/0/env/X: expected a string"),
            std::string::npos);
  EXPECT_NE(error_of({{"settings", {{{"name", "a"}}, {{"name", "a"}}}}})
                .find("/settings/1/name: expected a name no other"),
            std::string::npos);
  EXPECT_NE(error_of({{"settings", {{{"name", "a"}, {"timeout", 3}}}}})
                .find("/settings/0/timeout: expected one of"),
            std::string::npos);
  EXPECT_NE(error_of({{"settings", {{{"name", "a b"}}}}}).find("letters, digits"), std::string::npos);
}

TEST(Settings, TheDefaultFileParsesAndCoversEveryKnob) {
  std::ifstream in(std::string(NCCLFI_SOURCE_DIR) + "/workloads/torch/timeout-settings.json");
  const auto settings = parse_timeout_settings(json::parse(in), "timeout-settings.json");
  std::set<std::string> knobs;
  bool restarts = false;
  for (const auto& s : settings) {
    for (const auto& [k, v] : s.env) knobs.insert(k + "=" + v);
    restarts = restarts || s.max_restarts.value_or(0) > 0;
    EXPECT_TRUE(s.params.count("pg_timeout_s")) << s.name;  // the torch-job template's timeout
  }
  for (const char* knob :
       {"TORCH_NCCL_ASYNC_ERROR_HANDLING=0", "TORCH_NCCL_ASYNC_ERROR_HANDLING=1",
        "TORCH_NCCL_ASYNC_ERROR_HANDLING=2", "TORCH_NCCL_ASYNC_ERROR_HANDLING=3",
        "TORCH_NCCL_BLOCKING_WAIT=1", "TORCH_NCCL_ENABLE_MONITORING=1", "TORCH_NCCL_DUMP_ON_TIMEOUT=1"}) {
    EXPECT_TRUE(knobs.count(knob)) << knob;
  }
  EXPECT_TRUE(restarts);
}

TEST(MatrixFaults, EachBecomesAFaultOnTheChosenRank) {
  FaultPlacement at;
  at.rank = 1;
  at.after_calls = 7;
  at.stall_s = 2.5;
  const json stall = matrix_fault_json(MatrixFault::kStall, at)[0];
  EXPECT_EQ(stall["kind"], "gpu_hang");
  EXPECT_EQ(stall["params"]["ms"], 2500.0);
  EXPECT_EQ(stall["target"]["ranks"], json({1}));
  EXPECT_EQ(stall["trigger"]["after_calls"], 7);
  EXPECT_FALSE(matrix_fault_json(MatrixFault::kGpuHang, at)[0].contains("params"));  // for ever
  EXPECT_EQ(matrix_fault_json(MatrixFault::kHostHang, at)[0]["kind"], "hang");
  EXPECT_EQ(matrix_fault_json(MatrixFault::kDeadRank, at)[0]["layer"], "proc");
  EXPECT_EQ(matrix_fault_json(MatrixFault::kNetError, at)[0]["params"]["code"], "ncclRemoteError");
  // The network faults: the kinds the shim already has, on the same rank and after the same count of
  // its own net calls.
  const json nic = matrix_fault_json(MatrixFault::kNicDown, at)[0];
  EXPECT_EQ(nic["layer"], "net");
  EXPECT_EQ(nic["kind"], "nic_down");
  EXPECT_EQ(nic["target"], json({{"ranks", {1}}}));
  EXPECT_EQ(nic["trigger"]["after_calls"], 7);
  const json silent = matrix_fault_json(MatrixFault::kSilentPeer, at)[0];
  EXPECT_EQ(silent["layer"], "net");
  EXPECT_EQ(silent["kind"], "drop");
  EXPECT_EQ(silent["trigger"]["count"], 0);  // every later request, not one
  const json setup = matrix_fault_json(MatrixFault::kConnectSilent, at)[0];
  EXPECT_EQ(setup["layer"], "api");
  EXPECT_EQ(setup["kind"], "init_hang");
  EXPECT_FALSE(setup.contains("params"));  // for ever
  EXPECT_TRUE(needs_net_shim(MatrixFault::kNicDown));
  EXPECT_TRUE(needs_net_shim(MatrixFault::kSilentPeer));
  EXPECT_FALSE(needs_net_shim(MatrixFault::kConnectSilent));
  EXPECT_FALSE(needs_net_shim(MatrixFault::kNetError));
  EXPECT_EQ(all_matrix_faults().size(), 8u);
  EXPECT_EQ(matrix_fault_names(),
            "stall, gpu_hang, host_hang, dead_rank, net_error, nic_down, silent_peer or connect_silent");
  for (const auto f : all_matrix_faults()) EXPECT_EQ(matrix_fault_from_string(to_string(f)), f);
}

// A net fault on a job without the net shim could never fire: its cell says so and is never judged.
TEST(MatrixFaults, ASkippedCellSaysWhyAndIsNoFinding) {
  Cell c{"abort", MatrixFault::kNicDown, {}};
  c.skipped = "a net fault, and this job does not load the net shim";
  EXPECT_EQ(c.text(), "skipped: a net fault, and this job does not load the net shim");
  EXPECT_FALSE(cell_has_finding(c));
  EXPECT_TRUE(matrix_findings({{"abort", "", {}, {}, {}, {}}}, {c}, Recommendation{}).empty());
}

}  // namespace
}  // namespace ncclfi::cli
