// Hostile event logs: lines too long or too deep, ranks outside the job. Each is an out-of-contract
// line (reported), never a crash, and no stated rank sizes a report.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "judge.h"
#include "ncclfi/bounded_input.h"
#include "observe.h"
#include "reports.h"

namespace ncclfi::harness {
namespace {

std::string event_line(const std::string& rank, const std::string& extra = "") {
  return R"({"event":"step","source":"workload","ts_ns":1700000000000000000,"rank":)" + rank + extra + "}";
}

std::string nested(size_t depth) {
  return event_line("0", R"(,"x":)" + std::string(depth, '[') + std::string(depth, ']'));
}

// Before: 100k nested arrays became an event field, and writing verdict.json recursed once per level.
TEST(RobustEvents, DeeplyNestedLineIsOutOfContractAndTheVerdictStillPrints) {
  History history;
  history.world_size = 2;
  EXPECT_TRUE(observe_event_line(nested(100'000), history));  // 200 KB: too long to parse
  EXPECT_TRUE(observe_event_line(nested(20'000), history));   // 40 KB: short enough, too deep
  EXPECT_TRUE(history.events.empty());
  ASSERT_EQ(history.contract_errors.size(), 1u);  // one source and rank: counted together
  EXPECT_EQ(history.contract_errors[0].count, 2);
  EXPECT_NE(history.contract_errors[0].problem.find("longer than"), std::string::npos);
  History deep;
  deep.world_size = 2;
  EXPECT_TRUE(observe_event_line(nested(20'000), deep));
  ASSERT_EQ(deep.contract_errors.size(), 1u);
  EXPECT_NE(deep.contract_errors[0].problem.find("nested deeper"), std::string::npos);
  EXPECT_FALSE(to_json(history).dump().empty());
  EXPECT_TRUE(observe_event_line(nested(ncclfi::kMaxJsonDepth - 2), deep));  // within the limit: an event
  EXPECT_EQ(deep.events.size(), 1u);
}

// Before: "rank": 100000000 made report.html allocate rows for 1e8 ranks (std::bad_alloc).
TEST(RobustEvents, RankOutsideTheJobIsOutOfContract) {
  History history;
  history.world_size = 2;
  history.start_ns = 1700000000000000000;
  history.end_ns = history.start_ns + 1'000'000'000;
  EXPECT_TRUE(observe_event_line(event_line("100000000"), history));
  EXPECT_TRUE(observe_event_line(event_line("-7"), history));
  EXPECT_TRUE(observe_event_line(event_line("99999999999999"), history));
  EXPECT_TRUE(observe_event_line(event_line("1"), history));
  EXPECT_TRUE(observe_event_line(event_line("-1"), history));
  ASSERT_EQ(history.events.size(), 2u);
  ASSERT_FALSE(history.contract_errors.empty());
  EXPECT_NE(history.contract_errors[0].problem.find("rank 100000000 outside the job (-1 to 1)"),
            std::string::npos)
      << history.contract_errors[0].problem;
  int counted = 0;
  for (const auto& e : history.contract_errors) counted += e.count;
  EXPECT_EQ(counted, 3);
}

TEST(RobustEvents, HtmlReportDoesNotSizeRowsByAStatedRank) {
  RunRecord record;
  record.scenario = "hostile";
  record.history.start_ns = 1700000000000000000;
  record.history.end_ns = record.history.start_ns + 1'000'000'000;
  record.history.world_size = 0;  // a history read back without a world size
  HistoryEvent e;
  e.ts_ns = record.history.start_ns + 5;
  e.rank = 100'000'000;
  e.event = "inject";
  record.history.events.push_back(e);
  SuiteInfo suite{};
  const std::string html = render_html(suite, {record});
  EXPECT_LT(html.size(), 10'000'000u);
  EXPECT_EQ(html.find("rank 99999999"), std::string::npos);
}

TEST(RobustEvents, OverlongLineInTheLogIsReportedNotHeld) {
  const std::string path = ::testing::TempDir() + "ncclfi_overlong_events.jsonl";
  {
    std::ofstream out(path);
    out << event_line("0", R"(,"pad":")" + std::string(10 * kMaxEventLineBytes, 'p') + "\"") << "\n";
    out << event_line("1") << "\n";
  }
  History history;
  history.world_size = 2;
  const auto stats = read_event_log(path, history);
  std::remove(path.c_str());
  EXPECT_EQ(stats.events, 2u);  // both read: one into the timeline, one into contract_errors
  ASSERT_EQ(history.events.size(), 1u);
  EXPECT_EQ(history.events[0].rank, 1);
  ASSERT_EQ(history.contract_errors.size(), 1u);
  EXPECT_NE(history.contract_errors[0].problem.find("longer than"), std::string::npos);
  EXPECT_LE(history.contract_errors[0].line.size(), 210u);
}

}  // namespace
}  // namespace ncclfi::harness

namespace ncclfi::harness {
namespace {

// `ncclfi report` on a verdict.json nobody wrote: nested 100000 deep, it is an unreadable verdict,
// not a crash while rendering.
TEST(RobustEvents, DeeplyNestedVerdictIsUnreadableNotACrash) {
  const std::string dir = ::testing::TempDir() + "ncclfi_deep_verdict";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/verdict.json") << R"({"scenario":"x","history":{"events":[{"fields":)"
                                       << std::string(100'000, '[') << std::string(100'000, ']') << "}]}}";
  const auto records = load_runs(dir);
  std::filesystem::remove_all(dir);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_NE(records[0].harness_error.find("unreadable verdict"), std::string::npos)
      << records[0].harness_error;
  EXPECT_FALSE(render_html(SuiteInfo{}, records).empty());
}

}  // namespace
}  // namespace ncclfi::harness

namespace ncclfi::harness {
namespace {

// A rank that could not write some lines says so (events_lost): its clean-looking run is unknown,
// never a pass, and the reason names the rank.
TEST(RobustEvents, EventsLostMakeTheRunUnknown) {
  History history;
  history.world_size = 1;
  history.start_ns = 1700000000000000000;
  history.end_ns = history.start_ns + 1'000'000'000;
  ASSERT_TRUE(observe_event_line(event_line("0"), history));
  RankExit exit;
  exit.rank = 0;
  exit.exit_code = 0;
  exit.ts_ns = history.start_ns + 500;
  history.exits.push_back(exit);
  {
    History whole = history;
    const Judgement before = judge(whole, nlohmann::json{{"outcome", "clean"}});
    EXPECT_EQ(before.verdict, Answer::kPass) << (before.checks.empty() ? "" : before.checks[0].reason);
  }
  ASSERT_TRUE(observe_event_line(
      R"({"event":"events_lost","source":"workload","ts_ns":1700000000000000001,"rank":0,"pid":7,"lost":12})",
      history));
  ASSERT_EQ(history.records_lost.size(), 1u);
  EXPECT_NE(history.records_lost[0].find("could not write 12 event line(s)"), std::string::npos);
  const Judgement j = judge(history, nlohmann::json{{"outcome", "clean"}});
  EXPECT_EQ(j.verdict, Answer::kUnknown);
  bool said = false;
  for (const auto& c : j.checks) said = said || (c.field == "records" && c.answer == Answer::kUnknown);
  EXPECT_TRUE(said);
}

}  // namespace
}  // namespace ncclfi::harness

namespace ncclfi::harness {
namespace {

// Every rank of an ncclfi workload writes `done` before it exits 0. A file system full at the end of
// the job (and freed before the harness looked) loses those last lines without a trace in the events:
// the ranks that exited 0 without them are named, so the records check makes the run unknown.
TEST(RobustEvents, RanksThatExitedZeroWithoutDoneAreLostRecords) {
  History history;
  history.world_size = 3;
  auto exit_with = [&](int rank, std::optional<int> code, std::optional<int> signal = {}) {
    RankExit x;
    x.rank = rank;
    x.exit_code = code;
    x.signal = signal;
    history.exits.push_back(x);
  };
  ASSERT_TRUE(observe_event_line(
      R"({"event":"done","source":"cpu-ring","ts_ns":1700000000000000001,"rank":0,"iters":5})", history));
  exit_with(0, 0);
  exit_with(1, 0);                // exited 0, no done line: lost
  exit_with(2, std::nullopt, 9);  // killed: no done line expected
  const auto lost = missing_done_lines(history, 0);
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_NE(lost[0].find("rank 1 of attempt 0 exited 0 without its `done` line"), std::string::npos)
      << lost[0];
  EXPECT_TRUE(missing_done_lines(history, 1).empty()) << "another attempt's exits are not this one's";

  // A run that looks clean but for the missing line is unknown, never a pass.
  History clean;
  clean.world_size = 2;
  clean.start_ns = 1700000000000000000;
  clean.end_ns = clean.start_ns + 1'000'000'000;
  ASSERT_TRUE(observe_event_line(
      R"({"event":"done","source":"cpu-ring","ts_ns":1700000000000000001,"rank":0,"iters":5})", clean));
  for (int rank = 0; rank < 2; ++rank) {
    RankExit x;
    x.rank = rank;
    x.exit_code = 0;
    x.ts_ns = clean.start_ns + 500;
    clean.exits.push_back(x);
  }
  clean.records_lost = missing_done_lines(clean, 0);
  ASSERT_EQ(clean.records_lost.size(), 1u);
  const Judgement j = judge(clean, nlohmann::json{{"outcome", "clean"}});
  EXPECT_EQ(j.verdict, Answer::kUnknown) << (j.reasons.empty() ? "" : j.reasons[0]);
}

}  // namespace
}  // namespace ncclfi::harness
