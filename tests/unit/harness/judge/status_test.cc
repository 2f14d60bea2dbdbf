// One status per run, decided in one place and shown alike by every report; the suite files and
// their --junit/--html copies; skipped runs without an outcome, with their reason everywhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "history_builder.h"
#include "report_spec.h"
#include "reports.h"

namespace ncclfi::harness {
namespace {
using namespace testing;
namespace fs = std::filesystem;
using json = nlohmann::json;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

RunRecord judged(const std::string& name, const json& expect) {
  RunRecord r;
  r.scenario = name;
  r.expect = parse_expectation(expect);
  r.history = make_history(1);
  add_inject(r.history, 1.0, 0);
  add_detection(r.history, 2.0, 0, "workload_watchdog");
  all_exit(r.history, 2.1, 3);
  r.judgement = judge(r.history, r.expect);
  return r;
}

RunRecord skipped_run(const std::string& name, const std::string& why) {
  RunRecord r;
  r.scenario = name;
  r.expect = parse_expectation(json{{"outcome", "clean"}});
  r.skipped = true;
  r.skip_reason = why;
  return r;
}

std::vector<RunRecord> one_of_each() {
  std::vector<RunRecord> runs = {judged("p", {{"outcome", "detected"}}), judged("f", {{"outcome", "hung"}}),
                                 judged("u", {{"outcome", "detected"}, {"novel", 1}}),
                                 skipped_run("s", "needs 2 GPUs, 0 visible"),
                                 judged("e", {{"outcome", "detected"}})};
  runs[4].harness_error = "cannot start rank 0";
  return runs;
}

TEST(RunStatus, OneWordPerCaseAndHarnessErrorsBeatTheVerdict) {
  const auto runs = one_of_each();
  EXPECT_EQ(run_status(runs[0]), RunStatus::kPass);
  EXPECT_EQ(run_status(runs[1]), RunStatus::kFail);
  EXPECT_EQ(run_status(runs[2]), RunStatus::kUnknown);
  EXPECT_EQ(run_status(runs[3]), RunStatus::kSkipped);
  EXPECT_EQ(runs[4].judgement.verdict, Answer::kPass);
  EXPECT_EQ(run_status(runs[4]), RunStatus::kError);
  std::vector<std::string> words;
  for (const auto& r : runs) words.emplace_back(to_string(run_status(r)));
  EXPECT_EQ(words, (std::vector<std::string>{"pass", "fail", "unknown", "skipped", "error"}));
  const StatusCounts c = count_statuses(runs);
  EXPECT_EQ(c.pass + c.fail + c.unknown + c.skipped + c.error, 5u);
  EXPECT_EQ(counts_text(c), "5 scenario(s): 1 passed, 1 failed, 1 unknown, 1 skipped, 1 harness error(s)");
}

TEST(RunStatus, EveryReportUsesTheSameWords) {
  const auto runs = one_of_each();
  const json summary = summary_json(SuiteInfo{}, runs);
  EXPECT_EQ(summary["passed"], 1);
  EXPECT_EQ(summary["failed"], 1);
  EXPECT_EQ(summary["unknown"], 1);
  EXPECT_EQ(summary["skipped"], 1);
  EXPECT_EQ(summary["errors"], 1);
  const std::string table = format_final_table(runs);
  const std::string html = render_html(SuiteInfo{}, runs);
  const std::string xml = render_junit(SuiteInfo{}, runs);
  EXPECT_NE(xml.find("failures=\"1\" errors=\"2\" skipped=\"1\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("type=\"harness_error\""), std::string::npos);
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string word(to_string(run_status(runs[i])));
    EXPECT_EQ(summary["runs"][i]["status"], word);
    EXPECT_EQ(verdict_json(runs[i])["status"], word);
    EXPECT_NE(html.find("data-verdict=\"" + word + "\""), std::string::npos) << word;
    EXPECT_NE(table.find("  " + word + "\n"), std::string::npos) << word << "\n" << table;
  }
}

TEST(Skipped, NoOutcomeAndTheReasonEverywhere) {
  const std::vector<RunRecord> runs = {skipped_run("gpu-x", "needs 2 GPUs, 0 visible")};
  const json summary = summary_json(SuiteInfo{}, runs);
  EXPECT_FALSE(summary["runs"][0].contains("outcome"));
  EXPECT_EQ(summary["runs"][0]["skip_reason"], "needs 2 GPUs, 0 visible");
  const json verdict = verdict_json(runs[0]);
  EXPECT_FALSE(verdict.contains("outcome"));
  EXPECT_FALSE(verdict.contains("verdict"));
  EXPECT_EQ(verdict["status"], "skipped");
  EXPECT_EQ(run_record_from_json(verdict).skipped, true);
  EXPECT_NE(format_final_table(runs).find("skipped gpu-x: needs 2 GPUs, 0 visible"), std::string::npos);
  EXPECT_EQ(format_run_line(runs[0], 1, 1), "[1/1] gpu-x: skipped (needs 2 GPUs, 0 visible)");
  EXPECT_NE(render_junit(SuiteInfo{}, runs).find("<skipped message=\"needs 2 GPUs, 0 visible\"/>"),
            std::string::npos);
  EXPECT_NE(render_html(SuiteInfo{}, runs).find("Skipped: needs 2 GPUs, 0 visible"), std::string::npos);
}

TEST(SuiteFiles, RequestedFormatsGoBesideTheSuiteFilesOrToTheirPaths) {
  const fs::path dir = scratch_root() / "status_suite";
  fs::remove_all(dir);
  SuiteInfo suite;
  suite.out_dir = (dir / "suite").string();
  const auto runs = one_of_each();
  const auto files =
      write_suite_reports(suite, runs,
                          {parse_report_request("junit=" + (dir / "ci" / "junit.xml").string()),
                           parse_report_request("html=" + (dir / "ci" / "report.html").string()),
                           parse_report_request("metrics")});
  for (const char* name : {"summary.json", "junit.xml", "report.html", "metrics.prom"}) {
    EXPECT_TRUE(fs::exists(dir / "suite" / name)) << name;
  }
  EXPECT_EQ(files.size(), 6u);  // the three of every suite, two copies, the metrics asked for
  EXPECT_EQ(slurp(dir / "ci" / "junit.xml"), slurp(dir / "suite" / "junit.xml"));
  EXPECT_EQ(slurp(dir / "ci" / "report.html"), slurp(dir / "suite" / "report.html"));
  EXPECT_EQ(slurp(dir / "suite" / "metrics.prom"), render_prometheus(suite, runs));
}

TEST(ReportCatalogue, EveryFormatRendersAndIsFoundByItsName) {
  const auto runs = one_of_each();
  std::set<std::string_view> names, files;
  for (const ReportSpec* spec : report_specs()) {
    EXPECT_TRUE(names.insert(spec->name).second) << spec->name;
    EXPECT_TRUE(files.insert(spec->default_file).second) << spec->default_file;
    EXPECT_EQ(find_report(spec->name), spec);
    ASSERT_NE(spec->render, nullptr) << spec->name;
    EXPECT_FALSE(spec->render(SuiteInfo{}, runs).empty()) << spec->name;
  }
  EXPECT_EQ(find_report("pdf"), nullptr);
}

TEST(ReportCatalogue, ARequestNamesAFormatAndMaybeAPath) {
  EXPECT_EQ(parse_report_request("junit").spec, find_report("junit"));
  EXPECT_EQ(parse_report_request("junit").path, "");
  EXPECT_EQ(parse_report_request("html=out/r.html").path, "out/r.html");
  try {
    parse_report_request("pdf=x.pdf");
    FAIL() << "an unknown format must be refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("junit"), std::string::npos) << "names the formats: " << e.what();
  }
  EXPECT_THROW(parse_report_request("junit="), std::invalid_argument);
}

TEST(ReportCatalogue, DocsContainTheTableVerbatim) {
  std::ifstream in(NCCLFI_SOURCE_DIR "/docs/cli.md");
  ASSERT_TRUE(in) << "docs/cli.md not found";
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find(report_catalogue_markdown()), std::string::npos)
      << "docs/cli.md is out of date: run scripts/update-doc-tables:\n"
      << report_catalogue_markdown();
}

// RFC 4180 as a spreadsheet reads it: fields split on commas, quoted fields may hold commas, quotes
// (doubled) and line breaks; records end with CRLF.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1, std::vector<std::string>(1));
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        rows.back().back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        rows.back().back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().emplace_back();
    } else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      rows.emplace_back(1);
      ++i;
    } else {
      rows.back().back() += c;
    }
  }
  if (rows.back() == std::vector<std::string>(1)) rows.pop_back();  // after the last CRLF
  return rows;
}

TEST(CsvReport, OneRowPerRunThatASpreadsheetReadsBack) {
  auto runs = one_of_each();
  runs[1].judgement.reasons.insert(runs[1].judgement.reasons.begin(), "said \"no\",\nthen left");
  const auto rows = parse_csv(find_report("csv")->render(SuiteInfo{}, runs));
  ASSERT_EQ(rows.size(), runs.size() + 1);
  const auto& header = rows[0];
  auto column = [&](const std::string& name) {
    return static_cast<size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  for (const auto& row : rows) ASSERT_EQ(row.size(), header.size());
  EXPECT_EQ(rows[1][column("scenario")], "p");
  EXPECT_EQ(rows[1][column("status")], "pass");
  EXPECT_EQ(rows[1][column("outcome")], "detected");
  EXPECT_EQ(rows[1][column("mechanisms")], "workload_watchdog");
  EXPECT_EQ(rows[1][column("detection_s")], "1.000");  // detection at 2.0 s, injection at 1.0 s
  EXPECT_EQ(rows[2][column("status")], "fail");
  EXPECT_EQ(rows[2][column("reason")], "said \"no\",\nthen left");  // quoted, and read back whole
  EXPECT_EQ(rows[4][column("status")], "skipped");
  EXPECT_EQ(rows[4][column("outcome")], "");  // a skipped run has no outcome
  EXPECT_EQ(rows[4][column("reason")], "needs 2 GPUs, 0 visible");
  EXPECT_EQ(rows[5][column("status")], "error");
  EXPECT_EQ(rows[5][column("reason")], "cannot start rank 0");
}

}  // namespace
}  // namespace ncclfi::harness
