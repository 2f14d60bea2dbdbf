// The console fitted to a terminal: word wrapping, the narrow list of a Markdown catalogue, the final
// table at a given width, and the failure details (where the fault was, who noticed first, that rank's
// last lines, the HTML report).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "console_text.h"
#include "history_builder.h"
#include "markdown_list.h"
#include "reports.h"

namespace ncclfi::harness {
namespace {
namespace fs = std::filesystem;
using namespace testing;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

size_t widest(const std::string& text) {
  size_t w = 0;
  for (const auto& line : lines_of(text)) w = std::max(w, display_width(line));
  return w;
}

TEST(ConsoleText, WrapFillsLinesIndentsAndCutsLongWords) {
  EXPECT_EQ(wrap("one two three four", 9, 2, 0), "one two\n  three\n  four\n");
  EXPECT_EQ(wrap("a " + std::string(25, 'x'), 10, 0), "a\nxxxxxxxxxx\nxxxxxxxxxx\nxxxxx\n");
  EXPECT_EQ(wrap("", 10, 4), "");
  // A word that fits under the first line's indent but not under the deeper one of the next lines.
  EXPECT_LE(widest(wrap("file: " + std::string(76, 'p'), 80, 6, 4)), 80u);
  EXPECT_EQ(clip("caf\xc3\xa9 au lait", 7), "caf\xc3\xa9...") << "cut by columns, not bytes";
}

const char* kCatalogue =
    "### Kinds\n\n"
    "A paragraph that is long enough to need wrapping on a narrow terminal, as the catalogue's notes are.\n\n"
    "| layer | kind | params | effect |\n"
    "| ----- | ---- | ------ | ------ |\n"
    "| net   | delay | ms, jitter_ms | completions are reported late, by `ms` and a jitter of up to "
    "`jitter_ms` "
    "drawn per firing |\n"
    "| proc  | kill  |               | the rank gets the signal \\| a pipe stays a pipe |\n";

TEST(MarkdownList, RowsBecomeNamedEntriesThatFitTheWidth) {
  const std::string list = markdown_as_list(kCatalogue, 40);
  EXPECT_LE(widest(list), 40u) << list;
  EXPECT_EQ(list.find('|' + std::string(" net")), std::string::npos) << "no table left: " << list;
  EXPECT_NE(list.find("\nnet delay\n    params: ms, jitter_ms\n    effect: completions are reported"),
            std::string::npos)
      << list;
  EXPECT_NE(list.find("\nproc kill\n    effect: the rank gets the signal |"), std::string::npos) << list;
  EXPECT_EQ(list.find('`'), std::string::npos) << list;
  EXPECT_EQ(list.rfind("Kinds\n", 0), 0u) << list;
  // Wrapped lines of a cell are indented under it.
  EXPECT_NE(list.find("\n      "), std::string::npos) << list;
}

RunRecord failing_run(const fs::path& dir) {
  RunRecord r;
  r.scenario = "net-drop-hang";
  r.run_dir = dir.string();
  r.expect = parse_expectation(nlohmann::json{{"outcome", "hung"}});
  r.history = make_history(2);
  add_event(r.history, 0.5, 0, "workload", "op", {{"seq", 1}, {"dur_us", 10}});
  r.history.events.back().host = "node-a";
  add_inject(r.history, 1.0, 1);
  r.history.events.back().host = "node-b";
  add_detection(r.history, 4.0, 0, "workload_watchdog");
  all_exit(r.history, 4.2, 3);
  r.history.rank_logs = {{"attempt-0/rank-0.log", "attempt-0/rank-1.log"}};
  fs::create_directories(dir / "attempt-0");
  std::ofstream(dir / "attempt-0" / "rank-0.log")
      << "step 1\nstep 2\n\033[31mwatchdog: op 3 timed out\033[0m\nabort\n\nexit 3\n";
  r.judgement = judge(r.history, r.expect);
  return r;
}

TEST(ConsoleFailures, NameTheFaultTheFirstDetectorItsLastLinesAndTheHtmlReport) {
  const fs::path dir = scratch_root() / "console" / "failing";
  fs::remove_all(dir);
  const std::string details =
      format_failure_details({failing_run(dir)}, ConsoleStyle{false, 0, "runs/suite/report.html"});
  EXPECT_NE(details.find("  faulted: f1 on rank 1 (node-b)\n"), std::string::npos) << details;
  EXPECT_NE(details.find("  first noticed by workload_watchdog on rank 0 (node-a), 3.00s after the first "
                         "injection; its last lines (attempt-0/rank-0.log):\n"
                         "    | watchdog: op 3 timed out\n    | abort\n    | exit 3\n"),
            std::string::npos)
      << details;
  EXPECT_EQ(details.find("step 2"), std::string::npos) << "three lines only: " << details;
  EXPECT_EQ(details.find('\033'), std::string::npos) << "a rank's escapes stay out: " << details;
  EXPECT_NE(details.find("  html report: runs/suite/report.html\n"), std::string::npos) << details;
  EXPECT_LE(widest(format_failure_details({failing_run(dir)}, ConsoleStyle{false, 60, "x/report.html"})),
            60u);
}

// A rank's line reaches the console inside a check's reason (the first detection's evidence): its control
// characters, a title-setting OSC and an 8-bit CSI among them, are written out, never sent to the terminal.
TEST(ConsoleFailures, ARanksControlCharactersAreWrittenOutInReasons) {
  const fs::path dir = scratch_root() / "console" / "hostile";
  fs::remove_all(dir);
  RunRecord r = failing_run(dir);
  r.expect = parse_expectation(nlohmann::json{{"outcome", "detected"}, {"detected_by", {"api_error"}}});
  r.history.detections.back().evidence =
      "watchdog \x1b]0;owned\x07 fired \xc2\x9b"
      "2J\rdone";
  r.judgement = judge(r.history, r.expect);
  const std::string details = format_failure_details({r}, ConsoleStyle{false, 0, ""});
  EXPECT_NE(details.find("watchdog \\x1b]0;owned\\x07 fired \\u009b2J\\x0ddone"), std::string::npos)
      << details;
  for (const char* raw : {"\x1b", "\x07", "\xc2\x9b", "\r"})
    EXPECT_EQ(details.find(raw), std::string::npos) << "a raw control character reached the console";
  EXPECT_EQ(terminal_safe("plain text, UTF-8 \xe2\x9c\x93 kept\ttab"),
            "plain text, UTF-8 \xe2\x9c\x93 kept\\ttab");
}

TEST(ConsoleTable, FitsTheWidthByCuttingThenLeavingOutColumns) {
  const fs::path dir = scratch_root() / "console" / "table";
  fs::remove_all(dir);
  RunRecord r = failing_run(dir);
  r.scenario = "a-scenario-with-a-rather-long-name-for-the-table";
  r.expect =
      parse_expectation(nlohmann::json{{"outcome", "detected"},
                                       {"detected_by", {"workload_watchdog", "api_error", "async_error"}},
                                       {"detection_s", {{"min", 0.5}, {"max", 9}}}});
  const std::vector<RunRecord> runs{r};
  const std::string whole = format_final_table(runs, ConsoleStyle{});
  ASSERT_GT(widest(whole.substr(0, whole.find("\n\n"))), 100u) << whole;
  for (size_t width : {120u, 100u, 80u, 60u, 40u}) {
    const std::string table = format_final_table(runs, ConsoleStyle{false, width, "x/report.html"});
    EXPECT_LE(widest(table), width) << table;
    EXPECT_NE(table.find("workload_watchdog"), std::string::npos) << "the failure details keep it: " << table;
  }
  const std::string narrow = format_final_table(runs, ConsoleStyle{false, 60, ""});
  EXPECT_EQ(narrow.find("expected  "), std::string::npos) << narrow;
  EXPECT_NE(narrow.find("the expected column is left out"), std::string::npos) << narrow;
  EXPECT_NE(narrow.find("status"), std::string::npos) << narrow;
}

}  // namespace
}  // namespace ncclfi::harness
