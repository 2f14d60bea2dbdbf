#include <gtest/gtest.h>

#include <algorithm>

#include "history_builder.h"
#include "noise.h"

namespace ncclfi::harness {
namespace {
using namespace testing;

TEST(History, JsonRoundTripKeepsEverything) {
  History h = make_history(2);
  h.attempts = 2;
  h.torchrun_restarts = 1;
  h.deadline_hit = true;
  h.rank_logs = {{"rank0.log", "rank1.log"}, {"a1/rank0.log", "a1/rank1.log"}};
  h.baselines = {{4.5, {0.01, 0.02}}, {std::nullopt, {}}};
  h.armed_faults = {"drop1"};
  h.contract_errors.push_back({"workload", 2, "missing or invalid ts_ns", "{\"event\":\"op\"}", 3});
  add_inject(h, 1.0, 1);
  add_exit(h, 2.0, 0, 3);
  add_exit(h, 2.5, 1, {}, 9, true);
  add_detection(h, 1.5, 0, "workload_watchdog");
  History back = history_from_json(to_json(h));
  EXPECT_EQ(to_json(back), to_json(h));
  ASSERT_EQ(back.exits.size(), 2u);
  EXPECT_EQ(back.exits[0].exit_code, 3);
  EXPECT_FALSE(back.exits[0].signal.has_value());
  EXPECT_EQ(back.exits[1].signal, 9);
  EXPECT_TRUE(back.exits[1].killed_by_harness);
  ASSERT_EQ(back.baselines.size(), 2u);
  EXPECT_EQ(back.baselines[0].total_s, 4.5);
  EXPECT_EQ(back.baselines[0].step_s.size(), 2u);
  EXPECT_FALSE(back.baselines[1].total_s.has_value());
  EXPECT_EQ(back.armed_faults, std::vector<std::string>{"drop1"});
  ASSERT_EQ(back.contract_errors.size(), 1u);
  EXPECT_EQ(back.contract_errors[0].count, 3);
  EXPECT_EQ(back.events[0].fields["kind"], "drop");
}

// A long run: the history holds the first and the last events of each kind and counts the ones between,
// whose step durations still reach the timing verdict exactly. A history that held every event (or
// dropped the counted ones' durations) fails the sizes or the durations.
TEST(History, LongRunIsFoldedAndKeepsEveryStepDuration) {
  History h = make_history(2);
  constexpr int kSteps = 5000;
  std::vector<double> want;  // per seq, the slower rank's duration
  for (int seq = 0; seq < kSteps; ++seq) {
    double slowest = 0;
    for (int rank = 0; rank < 2; ++rank) {
      HistoryEvent e;
      e.ts_ns = at(1) + seq * 2 + rank;
      e.rank = rank;
      e.source = "workload";
      e.event = "op";
      const double us = 100.0 + (seq * 7 + rank * 3) % 50;
      e.fields = {{"seq", seq}, {"dur_us", us}};
      slowest = std::max(slowest, us / 1e6);
      add_event(h, std::move(e));
    }
    want.push_back(slowest);
  }
  EXPECT_EQ(h.events.size(), 2 * kKeepFirstEvents);
  settle_history(h);
  ASSERT_EQ(h.events.size(), 2 * (kKeepFirstEvents + kKeepLastEvents));
  EXPECT_EQ(h.events.back().fields["seq"], kSteps - 1);  // the last ones are the latest
  EXPECT_EQ(total_events(h), 2 * kSteps);
  ASSERT_EQ(h.folded.size(), 2u);
  EXPECT_EQ(h.folded[0].count, kSteps - static_cast<int64_t>(kKeepFirstEvents + kKeepLastEvents));
  std::vector<double> got = step_durations(h, 0);
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got, want);
  // What verdict.json stores does not grow with the run.
  EXPECT_LT(to_json(h).dump().size(), 64u << 10);
  EXPECT_EQ(history_from_json(to_json(h)).folded.size(), 2u);
}

TEST(History, TheLongestOpSurvivesFolding) {
  History h = make_history(1);
  for (int seq = 0; seq < 3000; ++seq) {
    HistoryEvent e;
    e.ts_ns = at(1) + seq;
    e.rank = 0;
    e.source = "preload";
    e.event = "op_time";
    e.fields = {{"seq", seq}, {"op", "allreduce"}, {"dur_us", seq == 1500 ? 9e6 : 100.0}};
    add_event(h, std::move(e));
  }
  settle_history(h);
  for (const auto& e : h.events) EXPECT_NE(e.fields["seq"], 1500) << "the long op is not among the held ones";
  ASSERT_TRUE(h.longest_op_us);
  EXPECT_DOUBLE_EQ(*h.longest_op_us, 9e6);
}

TEST(History, RepeatedDetectionsAreFoldedPerMechanismRankAndAttempt) {
  History h = make_history(2);
  for (int i = 0; i < 1000; ++i) add_detection(h, Detection{"api_error", 1, 0, at(1) + i, "line"});
  add_detection(h, Detection{"verification", 0, 0, at(2), "other"});
  settle_history(h);
  EXPECT_EQ(h.detections.size(), kKeepFirstDetections + kKeepLastDetections + 1);
  ASSERT_EQ(h.folded.size(), 1u);
  EXPECT_EQ(h.folded[0].source, "detection");
  EXPECT_EQ(h.folded[0].count, 1000 - static_cast<int64_t>(kKeepFirstDetections + kKeepLastDetections));
}

// A log that invents kind after kind is counted past the limit, and says so: the events check is
// unknown rather than judging a history with holes.
TEST(History, KindsPastTheLimitAreCountedAndReported) {
  History h = make_history(1);
  for (size_t i = 0; i < kMaxEventKinds + 10; ++i) {
    HistoryEvent e;
    e.ts_ns = at(1);
    e.rank = 0;
    e.source = "workload";
    e.event = "invented_" + std::to_string(i);
    add_event(h, std::move(e));
  }
  EXPECT_EQ(h.events.size(), kMaxEventKinds);
  ASSERT_EQ(h.contract_errors.size(), 1u);
  EXPECT_EQ(h.contract_errors[0].count, 10);
  EXPECT_EQ(total_events(h), static_cast<int64_t>(kMaxEventKinds + 10));
}

TEST(History, FromJsonToleratesMissingFields) {
  History h = history_from_json(nlohmann::json{{"scenario", "x"}});
  EXPECT_EQ(h.scenario, "x");
  EXPECT_EQ(h.attempts, 1);
  EXPECT_TRUE(h.events.empty());
  EXPECT_EQ(history_from_json(nlohmann::json::array()).scenario, "");
}

}  // namespace
}  // namespace ncclfi::harness
