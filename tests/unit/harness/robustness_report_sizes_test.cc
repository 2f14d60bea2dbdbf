// Reports are sized by what they read. A verdict.json whose history declares a world size of two
// billion, or holds a rank of two billion, must not make a report loop or allocate by that number: the
// ranks listed are the ranks the history holds records of.
#include <gtest/gtest.h>

#include <string>

#include "drill_report.h"
#include "reports.h"

namespace ncclfi::harness {
namespace {

using nlohmann::json;

// A verdict of a two-rank job as `ncclfi run` writes it, whose history then says `world_size`, with one
// event from a rank far outside any job.
RunRecord read_back_with_world_size(int64_t world_size) {
  RunRecord record;
  record.scenario = "hostile";
  record.history.world_size = 2;
  record.history.start_ns = 1700000000000000000;
  record.history.end_ns = record.history.start_ns + 1'000'000'000;
  for (int rank : {0, 1, 1'999'999'999}) {
    HistoryEvent e;
    e.ts_ns = record.history.start_ns + 5 + rank % 7;
    e.rank = rank;
    e.source = "workload";
    e.event = "step";
    record.history.events.push_back(e);
  }
  for (int rank : {0, 1}) {
    RankExit x;
    x.rank = rank;
    x.exit_code = 0;
    record.history.exits.push_back(x);
  }
  json doc = verdict_json(record);
  doc["history"]["world_size"] = world_size;
  return run_record_from_json(doc);
}

// The rows of the drill report's "What each rank saw" table.
std::vector<std::string> rank_rows(const std::string& markdown) {
  const auto section = markdown.find("### What each rank saw");
  const auto end = markdown.find("###", section + 4);
  std::vector<std::string> rows;
  size_t at = markdown.find("\n| ", section);
  while (at != std::string::npos && at < end) {
    const auto eol = markdown.find('\n', at + 1);
    const std::string row = markdown.substr(at + 1, eol - at - 1);
    if (row.rfind("| rank", 0) != 0 && row.rfind("| ---", 0) != 0)
      rows.push_back(row.substr(0, row.find(" |", 2)));
    at = markdown.find("\n| ", eol);
  }
  return rows;
}

// Before: the size read as unknown, and the drill report then listed no rank at all ("0 rank(s)") although
// the history held two; the HTML timeline drew a lane for every rank up to 4095 for one stray event.
TEST(ReportSizes, AHugeDeclaredWorldSizeListsTheRanksTheHistoryHolds) {
  for (const int64_t declared : {int64_t{2'000'000'000}, int64_t{-5}, int64_t{1} << 40}) {
    const RunRecord record = read_back_with_world_size(declared);
    const std::string markdown = drill_report_markdown(record);
    EXPECT_EQ(rank_rows(markdown), (std::vector<std::string>{"| 0", "| 1"})) << declared << "\n" << markdown;
    EXPECT_NE(markdown.find("1 attempt(s), 2 rank(s)"), std::string::npos) << markdown;
    SuiteInfo suite{};
    const std::string html = render_html(suite, {record});
    EXPECT_LT(html.size(), 200'000u);
    EXPECT_NE(html.find("data-ranks=\"2\""), std::string::npos);
    EXPECT_EQ(html.find(">rank 2</text>"), std::string::npos) << "a lane past the ranks held";
  }
}

// A declared size within the limit is believed: a rank that left no record is still listed.
TEST(ReportSizes, ABelievableWorldSizeListsEveryRank) {
  const RunRecord record = read_back_with_world_size(3);
  EXPECT_EQ(rank_rows(drill_report_markdown(record)), (std::vector<std::string>{"| 0", "| 1", "| 2"}));
}

}  // namespace
}  // namespace ncclfi::harness
