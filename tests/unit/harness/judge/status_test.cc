// One status per run, decided in one place and shown alike by every report; the suite files and
// their --junit/--html copies; skipped runs without an outcome, with their reason everywhere.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "history_builder.h"
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

TEST(SuiteFiles, JunitAndHtmlOptionsWriteCopiesBesideTheSuiteFiles) {
  const fs::path dir = scratch_root() / "status_suite";
  fs::remove_all(dir);
  SuiteInfo suite;
  suite.out_dir = (dir / "suite").string();
  const auto runs = one_of_each();
  const SuiteFiles files = write_suite_reports(suite, runs, (dir / "ci" / "junit.xml").string(),
                                               (dir / "ci" / "report.html").string());
  for (const char* name : {"summary.json", "junit.xml", "report.html"}) {
    EXPECT_TRUE(fs::exists(dir / "suite" / name)) << name;
  }
  EXPECT_EQ(files.copies.size(), 2u);
  EXPECT_EQ(slurp(dir / "ci" / "junit.xml"), slurp(dir / "suite" / "junit.xml"));
  EXPECT_EQ(slurp(dir / "ci" / "report.html"), slurp(dir / "suite" / "report.html"));
}

TEST(Reports, ANewFormatIsOneReport) {
  // Every format goes through the same interface; a console report writes the table.
  std::ostringstream out;
  const auto runs = one_of_each();
  make_console_report(out, false)->write(Suite{SuiteInfo{}, runs});
  EXPECT_EQ(out.str(), format_final_table(runs));
  const fs::path dir = scratch_root() / "status_reports";
  fs::remove_all(dir);
  auto junit = make_junit_report({(dir / "a.xml").string(), (dir / "b.xml").string()});
  junit->write(Suite{SuiteInfo{}, runs});
  EXPECT_EQ(junit->files().size(), 2u);
  EXPECT_EQ(slurp(dir / "a.xml"), render_junit(SuiteInfo{}, runs));
  EXPECT_EQ(slurp(dir / "a.xml"), slurp(dir / "b.xml"));
}

}  // namespace
}  // namespace ncclfi::harness
