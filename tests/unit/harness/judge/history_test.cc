#include <gtest/gtest.h>

#include "history_builder.h"

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

TEST(History, FromJsonToleratesMissingFields) {
  History h = history_from_json(nlohmann::json{{"scenario", "x"}});
  EXPECT_EQ(h.scenario, "x");
  EXPECT_EQ(h.attempts, 1);
  EXPECT_TRUE(h.events.empty());
  EXPECT_EQ(history_from_json(nlohmann::json::array()).scenario, "");
}

}  // namespace
}  // namespace ncclfi::harness
