// The drill report: fault windows from inject and heal events, and what the report says about a run.
#include <gtest/gtest.h>

#include "drill_report.h"
#include "history_builder.h"
#include "judge.h"

namespace ncclfi::harness {
namespace {

using namespace testing;

void add_window_inject(History& h, double s, int rank, uint64_t window) {
  add_event(h, s, rank, "net", "inject",
            {{"fault_id", "flap"}, {"kind", "stall"}, {"layer", "net"}, {"window", window}});
  h.events.back().host = "node-a";
}

void add_heal(History& h, double s, int rank, uint64_t window) {
  add_event(h, s, rank, "net", "heal",
            {{"fault_id", "flap"}, {"kind", "stall"}, {"layer", "net"}, {"window", window}});
}

TEST(FaultWindows, OneSpanPerWindowEndingAtItsHeal) {
  History h = make_history(2);
  add_window_inject(h, 1.0, 1, 1);
  add_window_inject(h, 1.2, 1, 1);
  add_heal(h, 2.0, 1, 1);
  add_window_inject(h, 3.0, 1, 2);  // never healed: ends at its last injection
  const auto windows = fault_windows(h);
  ASSERT_EQ(windows.size(), 2u);
  EXPECT_EQ(windows[0].window, 1u);
  EXPECT_EQ(windows[0].firings, 2);
  EXPECT_EQ(windows[0].start_ns, at(1.0));
  EXPECT_EQ(windows[0].end_ns, at(2.0));
  EXPECT_TRUE(windows[0].healed);
  EXPECT_EQ(windows[0].hosts, std::set<std::string>{"node-a"});
  EXPECT_EQ(windows[1].end_ns, at(3.0));
  EXPECT_FALSE(windows[1].healed);
}

TEST(DrillReport, SaysWhatWhereWhoHowFastAndRecovery) {
  RunRecord r;
  r.scenario = "drill-x";
  r.summary = "a flapping link";
  r.run_dir = "runs/drill-x/1";
  r.expect.outcomes = {Outcome::kDegraded};
  r.history = make_history(2);
  History& h = r.history;
  add_event(h, 0.5, 0, "workload", "op", {{"seq", 1}, {"dur_us", 10}});
  add_window_inject(h, 1.0, 1, 1);
  add_heal(h, 2.0, 1, 1);
  add_event(h, 2.5, 0, "workload", "op", {{"seq", 2}, {"dur_us", 10}});
  add_detection(h, 1.5, 0, "workload_watchdog");
  all_exit(h, 4, 0);
  r.judgement = judge(h, r.expect);
  const std::string md = drill_report_markdown(r);
  EXPECT_NE(md.find("## Drill report: drill-x"), std::string::npos);
  EXPECT_NE(md.find("| flap | net stall | node-a | 1 | 1 | 1 | +0.000 s | +1.000 s | yes | 1 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| 0 | - | - | workload_watchdog at +0.500 s: test evidence | 1 | attempt 1: exit 0 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("First detection: rank 0 by workload_watchdog, 0.50s after the first injection"),
            std::string::npos)
      << md;
  EXPECT_NE(
      md.find("recovered: rank 0 made progress (op) at +1.500 s, 0.500 s after the last fault window ended"),
      std::string::npos)
      << md;
  EXPECT_NE(md.find("### Verdict per expectation"), std::string::npos);
  EXPECT_NE(drill_report_html(r).find("<h4>What each rank saw</h4>"), std::string::npos);
}

// With node agents: each rank's last output lines, with its host, in the report and through verdict.json;
// a fault an agent refused is named, and the run's injection check says why nothing was injected.
TEST(DrillReport, ShowsTheRanksLastOutputAndAnAgentsRefusal) {
  RunRecord r;
  r.scenario = "drill-z";
  r.expect = parse_expectation({{"outcome", "clean"}});
  r.history = make_history(3);
  History& h = r.history;
  h.armed_faults = {"crash"};
  add_event(h, 0.5, 2, "agent", "injection_refused",
            {{"layer", "proc"}, {"action", "signal"}, {"why", "not in the allowed hosts (node1, node2)"}});
  h.events.back().host = "node3";
  RankOutput out;
  out.rank = 2;
  out.host = "node3";
  out.last_lines = {"one", "two", "three", "four", "five", "six"};
  out.lines = 6000;
  out.dropped = 40;
  out.skipped_lines = 2;
  h.rank_output.push_back(out);
  all_exit(h, 4, 0);
  r.judgement = judge(h, r.expect);
  const std::string md = drill_report_markdown(r);
  EXPECT_NE(md.find("| 2 | node3 | 1 | two / three / four / five / six | 6000 | 42 |"), std::string::npos)
      << md;
  EXPECT_NE(md.find("Host node3 refused to inject (rank 2, signal, proc layer): not in the allowed hosts "
                    "(node1, node2)."),
            std::string::npos)
      << md;
  bool named = false;
  for (const auto& c : r.judgement.checks)
    named = named ||
            (c.field == "injection" && c.answer == Answer::kFail &&
             c.reason.find("node3 refused: not in the allowed hosts (node1, node2)") != std::string::npos);
  EXPECT_TRUE(named) << to_json(r.judgement).dump();  // (the reasons, when it fails)
  const History back = history_from_json(to_json(h));
  ASSERT_EQ(back.rank_output.size(), 1u);
  EXPECT_EQ(back.rank_output[0].host, "node3");
  EXPECT_EQ(back.rank_output[0].last_lines, out.last_lines);
  EXPECT_EQ(back.rank_output[0].dropped, 40);
  EXPECT_EQ(back.rank_output[0].skipped_lines, 2);
}

TEST(DrillReport, AFailedLastAttemptIsNotARecovery) {
  RunRecord r;
  r.scenario = "drill-y";
  r.history = make_history(2);
  add_inject(r.history, 1.0, 1);
  add_exit(r.history, 3, 0, 3);
  add_exit(r.history, 3, 1, std::nullopt, 9, true);
  r.judgement = judge(r.history, r.expect);
  const std::string md = drill_report_markdown(r);
  EXPECT_NE(md.find("not recovered: the last attempt (1 of 1) did not complete (rank 0: exit 3)"),
            std::string::npos)
      << md;
}

}  // namespace
}  // namespace ncclfi::harness
