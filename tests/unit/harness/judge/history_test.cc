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
  constexpr size_t kHeld = kKeepFirstEvents + kKeepLastEvents + kKeepLongestEvents;
  settle_history(h);
  ASSERT_EQ(h.events.size(), 2 * kHeld);
  EXPECT_EQ(total_events(h), 2 * kSteps);
  ASSERT_EQ(h.folded.size(), 2u);
  EXPECT_EQ(h.folded[0].count, kSteps - static_cast<int64_t>(kHeld));
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
  EXPECT_EQ(
      std::count_if(h.events.begin(), h.events.end(), [](const auto& e) { return e.fields["seq"] == 1500; }),
      1);
  ASSERT_TRUE(h.longest_op_us);
  EXPECT_DOUBLE_EQ(*h.longest_op_us, 9e6);
}

HistoryEvent op_event(int rank, int seq, double dur_us) {
  HistoryEvent e;
  e.ts_ns = at(1) + seq * 1000 + rank;
  e.rank = rank;
  e.source = "workload";
  e.event = "op";
  e.fields = {{"seq", seq}, {"dur_us", dur_us}};
  return e;
}

// A flapping link stalls every rank once per flap, deep inside a long run: each stall (the longest ops)
// stays held, wherever it falls, while the ops around it are counted; a history that keeps only the first
// and the last ops loses the stalls in the middle, and one that keeps everything fails the size.
TEST(History, StallsInTheMiddleOfALongRunAreHeld) {
  History h = make_history(2);
  constexpr int kOps = 4000;
  const std::vector<int> stalls = {1000, 2000, 3000};
  for (int seq = 0; seq < kOps; ++seq) {
    for (int rank = 0; rank < 2; ++rank) {
      const bool stall = std::find(stalls.begin(), stalls.end(), seq) != stalls.end();
      add_event(h, op_event(rank, seq, stall ? 1.5e6 : 200.0 + seq % 7));
    }
  }
  // Not settled: what verdict.json of an interrupted run stores holds them too.
  int in_json = 0;
  const nlohmann::json doc = to_json(h);  // held: a range over a temporary's member would dangle
  for (const auto& e : doc["events"]) in_json += e["fields"]["dur_us"] == 1.5e6;
  EXPECT_EQ(in_json, 6);
  settle_history(h);
  for (int rank = 0; rank < 2; ++rank) {
    for (const int seq : stalls) {
      EXPECT_EQ(std::count_if(h.events.begin(), h.events.end(),
                              [&](const auto& e) { return e.rank == rank && e.fields["seq"] == seq; }),
                1)
          << "rank " << rank << ": the stall at seq " << seq << " is not held";
    }
  }
  EXPECT_EQ(total_events(h), 2 * kOps);
  EXPECT_LE(h.events.size(), 2 * (kKeepFirstEvents + kKeepLastEvents + kKeepLongestEvents));
  // Every op's duration still reaches the timing verdict once: held or folded, never both.
  EXPECT_EQ(step_durations(h, 0).size(), static_cast<size_t>(kOps));
}

// A flapping fault injects many times in each of its windows: the first and the last injection of every
// window stay held (the timeline draws each window from them), not only those of the first and last.
TEST(History, EveryWindowOfAFlappingFaultKeepsItsEdges) {
  History h = make_history(2);
  constexpr int kWindows = 5, kPerWindow = 200;
  for (int w = 0; w < kWindows; ++w) {
    for (int i = 0; i < kPerWindow; ++i) {
      HistoryEvent e;
      e.ts_ns = at(1) + (w * kPerWindow + i) * 1000;
      e.rank = 1;
      e.source = "net";
      e.event = "inject";
      e.fields = {{"fault_id", "flap"}, {"kind", "stall"}, {"window", w}, {"firing", i}};
      add_event(h, std::move(e));
    }
  }
  settle_history(h);
  for (int w = 0; w < kWindows; ++w) {
    for (const int firing : {0, kPerWindow - 1}) {
      EXPECT_EQ(std::count_if(
                    h.events.begin(), h.events.end(),
                    [&](const auto& e) { return e.fields["window"] == w && e.fields["firing"] == firing; }),
                1)
          << "window " << w << ": injection " << firing << " is not held";
    }
  }
  EXPECT_EQ(total_events(h), kWindows * kPerWindow);
  EXPECT_LE(h.events.size(), kKeepFirstEvents + kKeepLastEvents + 2 * kWindows);
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

// `ncclfi report` re-renders a verdict.json anyone may have edited: a declared world size past the
// largest job sized its tables (two billion rows). It reads as unknown; a real one stays.
TEST(History, FromJsonRefusesAWorldSizeNoJobCanHave) {
  EXPECT_EQ(history_from_json(nlohmann::json{{"world_size", 2'000'000'000}}).world_size, 0);
  EXPECT_EQ(history_from_json(nlohmann::json{{"world_size", -3}}).world_size, 0);
  EXPECT_EQ(history_from_json(nlohmann::json{{"world_size", 4096}}).world_size, 4096);
  EXPECT_EQ(history_from_json(nlohmann::json{{"world_size", 8}}).world_size, 8);
}

}  // namespace
}  // namespace ncclfi::harness
