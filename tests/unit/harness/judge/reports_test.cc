// Reports: atomic writes, verdict.json round trip, console table and progress line, JUnit structure
// and escaping, HTML self-containedness, re-rendering from run directories.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "history_builder.h"
#include "report_spec.h"
#include "reports.h"

namespace ncclfi::harness {
namespace {
using namespace testing;
namespace fs = std::filesystem;

fs::path scratch(const std::string& name) {
  fs::path dir = scratch_root() / "reports" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

RunRecord make_record(const std::string& name, const nlohmann::json& expect, const fs::path& run_dir) {
  RunRecord r;
  r.scenario = name;
  r.summary = "summary of " + name;
  r.tags = {"cpu", "net"};
  r.run_dir = run_dir.string();
  r.expect = parse_expectation(expect);
  r.history = make_history(2);
  add_event(r.history, 0.5, 0, "workload", "op", {{"seq", 1}, {"dur_us", 10}});
  add_event(r.history, 0.6, 1, "workload", "op", {{"seq", 1}, {"dur_us", 12}});
  add_inject(r.history, 1.0, 1);
  add_detection(r.history, 4.0, 0, "workload_watchdog");
  add_detection(r.history, 4.1, 1, "workload_watchdog");
  all_exit(r.history, 4.2, 3);
  r.judgement = judge(r.history, expect);
  return r;
}

TEST(Metrics, PrometheusTextFormatWithOneSeriesPerRun) {
  fs::path dir = scratch("metrics");
  std::vector<RunRecord> runs = {make_record("a\"b\\c", {{"outcome", "detected"}}, dir),
                                 make_record("rep", {{"outcome", "detected"}}, dir),
                                 make_record("rep", {{"outcome", "hung"}}, dir)};
  RunRecord skipped;
  skipped.scenario = "gpu-only";
  skipped.skipped = true;
  runs.push_back(skipped);
  SuiteInfo suite;
  suite.end_ns = 1'700'000'000'123'000'000;
  const std::string text = render_prometheus(suite, runs);
  std::istringstream in(text);
  std::set<std::string> series, helped, typed, families;
  std::string last_family;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# HELP ", 0) == 0) {
      helped.insert(line.substr(7, line.find(' ', 7) - 7));
      continue;
    }
    if (line.rfind("# TYPE ", 0) == 0) {
      EXPECT_NE(line.find(" gauge"), std::string::npos) << line;
      typed.insert(line.substr(7, line.find(' ', 7) - 7));
      continue;
    }
    const std::string name = line.substr(0, line.find_first_of("{ "));
    EXPECT_TRUE(helped.count(name) && typed.count(name)) << "HELP and TYPE come before " << line;
    if (name != last_family) {
      EXPECT_TRUE(families.insert(name).second) << "a family's samples are together: " << line;
    }
    last_family = name;
    EXPECT_TRUE(series.insert(line.substr(0, line.rfind(' '))).second) << "duplicate series " << line;
  }
  EXPECT_NE(text.find("ncclfi_scenario_status{scenario=\"a\\\"b\\\\c\",run=\"1\",status=\"pass\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("ncclfi_scenario_status{scenario=\"rep\",run=\"2\",status=\"fail\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("ncclfi_scenario_detection_seconds{scenario=\"rep\",run=\"1\"} 3\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("ncclfi_scenario_status{scenario=\"gpu-only\",run=\"1\",status=\"skipped\"} 1"),
            std::string::npos);
  EXPECT_EQ(text.find("ncclfi_scenario_restarts{scenario=\"gpu-only\""), std::string::npos)
      << "a skipped run has no figures";
  EXPECT_NE(text.find("ncclfi_suite_scenario_runs{status=\"fail\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("ncclfi_suite_end_timestamp_seconds 1700000000.123\n"), std::string::npos) << text;
}

TEST(AtomicWrite, CreatesReplacesAndLeavesNoTemp) {
  fs::path dir = scratch("atomic");
  const fs::path target = dir / "sub" / "file.json";
  write_file_atomic(target.string(), "first");
  EXPECT_EQ(slurp(target), "first");
  write_file_atomic(target.string(), "second, longer content");
  EXPECT_EQ(slurp(target), "second, longer content");
  size_t entries = 0;
  for (const auto& e : fs::directory_iterator(dir / "sub")) {
    ++entries;
    EXPECT_EQ(e.path().filename(), "file.json");
  }
  EXPECT_EQ(entries, 1u);
  EXPECT_EQ(fs::status(target).permissions() & fs::perms::others_read, fs::perms::others_read);
}

TEST(AtomicWrite, FailureKeepsOldFileAndThrows) {
  fs::path dir = scratch("atomic_fail");
  const fs::path target = dir / "taken";
  fs::create_directories(target / "child");  // a non-empty directory cannot be replaced by rename
  EXPECT_THROW(write_file_atomic(target.string(), "x"), std::runtime_error);
  EXPECT_TRUE(fs::is_directory(target));
  size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++entries;
  EXPECT_EQ(entries, 1u);  // no temp file left behind
}

TEST(Verdict, WrittenAtomicallyAndReloaded) {
  fs::path dir = scratch("verdict");
  RunRecord r = make_record("net-drop", {{"outcome", "detected"}}, dir);
  write_verdict(r);
  auto doc = nlohmann::json::parse(slurp(dir / "verdict.json"));
  EXPECT_EQ(doc["verdict"], "pass");
  EXPECT_EQ(doc["outcome"], "detected");
  EXPECT_NEAR(doc["detection_s"].get<double>(), 3.0, 1e-9);
  RunRecord back = run_record_from_json(doc);
  EXPECT_EQ(verdict_json(back), verdict_json(r));
}

TEST(Console, FinalTableHasColumnsAndTotals) {
  fs::path dir = scratch("table");
  std::vector<RunRecord> runs = {make_record("pass-case", {{"outcome", "detected"}}, dir),
                                 make_record("fail-case", {{"outcome", "hung"}}, dir)};
  RunRecord skipped;
  skipped.scenario = "gpu-only";
  skipped.skipped = true;
  skipped.skip_reason = "no GPU";
  runs.push_back(skipped);
  const std::string table = format_final_table(runs, false);
  EXPECT_NE(table.find("scenario"), std::string::npos);
  EXPECT_NE(table.find("detection"), std::string::npos);
  EXPECT_NE(table.find("pass-case"), std::string::npos);
  EXPECT_NE(table.find("detected(workload_watchdog)"), std::string::npos);
  EXPECT_NE(table.find("3.00s"), std::string::npos);
  EXPECT_NE(table.find("1 passed, 1 failed, 0 unknown, 1 skipped"), std::string::npos) << table;
  EXPECT_EQ(table.find("\033["), std::string::npos);
  EXPECT_NE(format_final_table(runs, true).find("\033[31mfail"), std::string::npos);
}

TEST(Console, FailuresListTheirChecksReasonsAndReportPath) {
  fs::path dir = scratch("failures");
  std::vector<RunRecord> runs = {make_record("pass-case", {{"outcome", "detected"}}, dir),
                                 make_record("fail-case", {{"outcome", "hung"}}, dir)};
  const std::string table = format_final_table(runs, false);
  const size_t failures = table.find("failures:\n");
  ASSERT_NE(failures, std::string::npos) << table;
  const std::string details = table.substr(failures);
  EXPECT_NE(details.find("FAIL fail-case\n"), std::string::npos) << details;
  EXPECT_EQ(details.find("pass-case"), std::string::npos) << "a passing run is not a failure: " << details;
  // The failing check with its reason (the judge's own text), and where the run's report is.
  for (const auto& c : runs[1].judgement.checks) {
    if (c.answer == Answer::kFail) {
      EXPECT_NE(details.find("  " + c.field + ": fail: " + c.reason), std::string::npos);
    }
  }
  EXPECT_NE(details.find("  report: " + dir.string() + "/verdict.json"), std::string::npos) << details;
  EXPECT_TRUE(format_failure_details({runs[0]}).empty());
}

TEST(Console, ClippedExpectationsSayWhereTheWholeTextIs) {
  fs::path dir = scratch("clipped");
  std::vector<RunRecord> runs = {
      make_record("long",
                  {{"outcome", "detected"},
                   {"detected_by", {"workload_watchdog", "api_error", "async_error"}},
                   {"detection_s", {{"min", 0.5}, {"max", 9}}}},
                  dir)};
  ASSERT_GT(expected_summary(runs[0].expect).size(), 48u);
  const std::string table = format_final_table(runs, ConsoleStyle{false, 80, ""});
  EXPECT_NE(table.find("...  "), std::string::npos) << table;
  EXPECT_NE(table.find("clipped to fit"), std::string::npos) << table;
  EXPECT_EQ(
      format_final_table({make_record("short", {{"outcome", "detected"}}, dir)}, ConsoleStyle{false, 80, ""})
          .find("clipped"),
      std::string::npos);
  // No width (a pipe, a file): nothing is cut.
  const std::string whole = format_final_table(runs, false);
  EXPECT_NE(whole.find(expected_summary(runs[0].expect)), std::string::npos) << whole;
  EXPECT_EQ(whole.find("clipped"), std::string::npos) << whole;
}

TEST(Console, RepeatedRunsShowThePassRatePerScenario) {
  fs::path dir = scratch("repeat");
  std::vector<RunRecord> runs = {make_record("steady", {{"outcome", "detected"}}, dir),
                                 make_record("steady", {{"outcome", "detected"}}, dir),
                                 make_record("flaky", {{"outcome", "detected"}}, dir),
                                 make_record("flaky", {{"outcome", "hung"}}, dir)};
  const auto rates = pass_rates(runs);
  ASSERT_EQ(rates.size(), 2u);
  EXPECT_EQ(rates[0].scenario, "steady");
  EXPECT_EQ(rates[0].passed, 2u);
  EXPECT_FALSE(rates[0].flaky());
  EXPECT_EQ(rates[1].runs, 2u);
  EXPECT_EQ(rates[1].passed, 1u);
  EXPECT_TRUE(rates[1].flaky());
  const std::string table = format_final_table(runs, false);
  EXPECT_NE(table.find("steady  2/2 passed (100%)\n"), std::string::npos) << table;
  EXPECT_NE(table.find("flaky   1/2 passed (50%), flaky\n"), std::string::npos) << table;
  const auto summary = summary_json(SuiteInfo{}, runs);
  ASSERT_TRUE(summary.contains("pass_rates"));
  EXPECT_EQ(summary["pass_rates"][1]["pass_rate"], 0.5);
  EXPECT_EQ(summary["pass_rates"][1]["flaky"], true);
  // Run once each: no pass-rate section.
  EXPECT_FALSE(summary_json(SuiteInfo{}, {runs[0], runs[2]}).contains("pass_rates"));
  EXPECT_EQ(format_final_table({runs[0], runs[2]}, false).find("pass rate"), std::string::npos);
}

ProgressState busy_progress() {
  ProgressState s;
  s.index = 3;
  s.total = 12;
  s.scenario = "net-drop-recv-hang";
  s.pass = "faulted";
  s.phase = "running";
  s.ranks_running = 4;
  s.ranks_total = 4;
  s.elapsed_s = 3.25;
  s.deadline_s = 30;
  s.injections = 1;
  s.detections = {"workload_watchdog"};
  s.suite_elapsed_s = 65;
  s.eta_s = 130;
  return s;
}

TEST(Console, ProgressLineIsOneLineWithinWidth) {
  const ProgressState s = busy_progress();
  const std::string line = format_progress_line(s, 200);
  EXPECT_EQ(
      line,
      "[3/12] net-drop-recv-hang  faulted  ranks 4/4  3.2s/30s  injected 1  detected: workload_watchdog  "
      "suite 1m05s  ETA 2m10s");
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_EQ(format_progress_line(s, 0), line) << "no width: whole";
  // Never the last column of the terminal (the cursor would wrap and leave a fragment behind).
  for (size_t width : {20u, 40u, 60u, 80u, 100u, 114u}) {
    EXPECT_LE(format_progress_line(s, width).size(), width - 1) << width;
  }
}

TEST(Console, NarrowProgressLineKeepsThePositionAndTimesFirst) {
  const std::string narrow = format_progress_line(busy_progress(), 80);
  EXPECT_EQ(narrow, "[3/12] net-drop-recv-hang  faulted  3.2s/30s  suite 1m05s  ETA 2m10s") << narrow;
  // A long name gives way (down to a third of the line) to the pass before that goes too.
  EXPECT_EQ(format_progress_line(busy_progress(), 30), "[3/12] net-dr...  faulted");
  EXPECT_EQ(format_progress_line(busy_progress(), 24), "[3/12] net-drop-recv...");
  const std::string cut = format_progress_line(busy_progress(), 20);
  EXPECT_EQ(cut.size(), 19u);
  EXPECT_EQ(cut.substr(16), "...");
}

TEST(Console, ProgressLineShowsRepeatsRoundsAndPhase) {
  ProgressState s = busy_progress();
  s.pass = "baseline";
  s.repeat = 2;
  s.repeats = 5;
  s.round = 2;
  s.rounds = 3;
  s.phase = "teardown";
  s.attempt = 1;
  const std::string line = format_progress_line(s, 0);
  EXPECT_NE(line.find("[3/12] net-drop-recv-hang  run 2/5  baseline  round 2/3  teardown  attempt 2"),
            std::string::npos)
      << line;
  EXPECT_NE(line.find("suite 1m05s  ETA 2m10s"), std::string::npos) << line;
}

// A small well-formedness check: balanced tags, no stray '<' or '&' in text or attributes.
bool well_formed_xml(const std::string& xml, std::string* why) {
  std::vector<std::string> stack;
  size_t i = xml.find("?>");
  if (xml.rfind("<?xml", 0) != 0 || i == std::string::npos) return *why = "no XML declaration", false;
  i += 2;
  static const std::regex entity("^&(amp|lt|gt|quot|apos|#[0-9]+);");
  while (i < xml.size()) {
    if (xml[i] == '&') {
      if (!std::regex_search(xml.substr(i, 10), entity))
        return *why = "bare & at " + std::to_string(i), false;
      ++i;
      continue;
    }
    if (xml[i] != '<') {
      ++i;
      continue;
    }
    size_t end = xml.find('>', i);
    if (end == std::string::npos) return *why = "unterminated tag", false;
    std::string tag = xml.substr(i + 1, end - i - 1);
    if (tag.find('<') != std::string::npos) return *why = "'<' inside tag " + tag, false;
    if (!tag.empty() && tag[0] == '/') {
      if (stack.empty() || stack.back() != tag.substr(1)) return *why = "mismatched </" + tag + ">", false;
      stack.pop_back();
    } else if (!tag.empty() && tag.back() != '/') {
      stack.push_back(tag.substr(0, tag.find(' ')));
    }
    i = end + 1;
  }
  if (!stack.empty()) return *why = "unclosed <" + stack.back() + ">", false;
  return true;
}

TEST(JUnit, StructureCountsAndEscaping) {
  fs::path dir = scratch("junit");
  std::vector<RunRecord> runs = {make_record("ok & <fine>", {{"outcome", "detected"}}, dir),
                                 make_record("bad \"quoted\" 'x'", {{"outcome", "hung"}}, dir),
                                 make_record("odd", {{"mystery", 1}}, dir)};
  runs[1].judgement.reasons.insert(runs[1].judgement.reasons.begin(),
                                   "control \x01 char and bad utf8 \xff end");
  RunRecord skipped;
  skipped.scenario = "gpu <only>";
  skipped.skipped = true;
  skipped.skip_reason = "needs 2 GPUs & CUDA";
  runs.push_back(skipped);
  SuiteInfo suite;
  suite.name = "suite <cpu>";
  const std::string xml = render_junit(suite, runs);
  std::string why;
  EXPECT_TRUE(well_formed_xml(xml, &why)) << why << "\n" << xml;
  EXPECT_NE(
      xml.find("<testsuite name=\"suite &lt;cpu&gt;\" tests=\"4\" failures=\"1\" errors=\"1\" skipped=\"1\""),
      std::string::npos)
      << xml;
  EXPECT_NE(xml.find("name=\"ok &amp; &lt;fine&gt;\""), std::string::npos);
  EXPECT_NE(xml.find("name=\"bad &quot;quoted&quot; &apos;x&apos;\""), std::string::npos);
  EXPECT_NE(xml.find("<failure message="), std::string::npos);
  EXPECT_NE(xml.find("<error message="), std::string::npos);
  EXPECT_NE(xml.find("<skipped message=\"needs 2 GPUs &amp; CUDA\"/>"), std::string::npos);
  EXPECT_EQ(xml.find('\x01'), std::string::npos);
  EXPECT_EQ(xml.find('\xff'), std::string::npos);
  EXPECT_NE(xml.find("\xEF\xBF\xBD"), std::string::npos);  // U+FFFD for the bad byte
  EXPECT_EQ(std::count(xml.begin(), xml.end(), '\n') > 0, true);
  size_t testcases = 0;
  for (size_t p = 0; (p = xml.find("<testcase ", p)) != std::string::npos; ++p) ++testcases;
  EXPECT_EQ(testcases, 4u);
}

TEST(Html, SelfContainedWithTimelinePerScenario) {
  fs::path dir = scratch("html");
  std::vector<RunRecord> runs = {
      make_record("a</script><script>alert(1)</script>", {{"outcome", "detected"}}, dir),
      make_record("b", {{"outcome", "hung"}}, dir)};
  runs[1].history.attempts = 2;
  add_event(runs[1].history, 5, -1, "harness", "restart", {}, 1);
  const std::string html = render_html(SuiteInfo{}, runs);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  // Nothing fetched: no external references of any kind.
  for (const char* needle : {"src=", "<link", "@import", "url(", "https://", "fetch(", "XMLHttpRequest"}) {
    EXPECT_EQ(html.find(needle), std::string::npos) << needle;
  }
  // The only URL is the SVG namespace, which is an identifier, not a fetch.
  std::string without_ns = std::regex_replace(html, std::regex("xmlns=\"http://www.w3.org/2000/svg\""), "");
  EXPECT_EQ(without_ns.find("http://"), std::string::npos);
  EXPECT_NE(html.find("<style>"), std::string::npos);
  EXPECT_NE(html.find("<script>"), std::string::npos);
  size_t svgs = 0;
  for (size_t p = 0; (p = html.find("<svg ", p)) != std::string::npos; ++p) ++svgs;
  EXPECT_EQ(svgs, 2u);
  EXPECT_NE(html.find("rank 0"), std::string::npos);
  EXPECT_NE(html.find("rank 1"), std::string::npos);
  EXPECT_NE(html.find("fill=\"#d93025\""), std::string::npos);    // injection marker
  EXPECT_NE(html.find("fill=\"#f29900\""), std::string::npos);    // detection marker
  EXPECT_NE(html.find("fill=\"#8c1d18\""), std::string::npos);    // abnormal exit marker
  EXPECT_NE(html.find("stroke=\"#1a73e8\""), std::string::npos);  // restart line
  EXPECT_NE(html.find("<polyline class=\"latency\" data-rank=\"0\""), std::string::npos);  // op durations
  EXPECT_EQ(html.find("<script>alert(1)"), std::string::npos);  // scenario names are escaped
  EXPECT_NE(html.find("&lt;/script&gt;"), std::string::npos);
}

// A long suite (a soak) keeps only the span of each passing run's history, so that it does not grow by
// a full history a run; a run that did not pass keeps everything (the console prints its failure), and
// a short suite keeps everything. The page then points to the run's own directory for what it left out.
TEST(Html, ALongSuiteKeepsFullHistoriesOnlyForRunsThatDidNotPass) {
  fs::path dir = scratch("html-trimmed");
  RunRecord passed = make_record("passed", {{"outcome", "detected"}}, dir);
  RunRecord failed = make_record("failed", {{"outcome", "hung"}}, dir);
  ASSERT_EQ(run_status(passed), RunStatus::kPass);
  ASSERT_EQ(run_status(failed), RunStatus::kFail);
  EXPECT_TRUE(suite_keeps_full_history(kSuiteRunsWithFullHistory, passed));
  EXPECT_FALSE(suite_keeps_full_history(kSuiteRunsWithFullHistory + 1, passed));
  EXPECT_TRUE(suite_keeps_full_history(kSuiteRunsWithFullHistory + 1, failed));

  const int64_t start = passed.history.start_ns, end = passed.history.end_ns;
  const int world = passed.history.world_size;
  ASSERT_FALSE(passed.history.events.empty());
  trim_history(passed);
  EXPECT_TRUE(passed.history_trimmed);
  EXPECT_TRUE(passed.history.events.empty());
  EXPECT_TRUE(passed.history.detections.empty());
  EXPECT_TRUE(passed.history.exits.empty());
  EXPECT_EQ(passed.history.start_ns, start);  // the suite's span and the run's time still add up
  EXPECT_EQ(passed.history.end_ns, end);
  EXPECT_EQ(passed.history.world_size, world);
  EXPECT_EQ(run_status(passed), RunStatus::kPass) << "trimming never changes a verdict";

  const std::string html = render_html(SuiteInfo{}, {passed, failed});
  size_t svgs = 0;
  for (size_t p = 0; (p = html.find("<svg ", p)) != std::string::npos; ++p) ++svgs;
  EXPECT_EQ(svgs, 1u) << "only the failed run is drawn";
  EXPECT_NE(html.find("<code>ncclfi report " + dir.string() + " --html FILE</code>"), std::string::npos)
      << html;
}

TEST(Html, ArmAndDisarmAreDrawnWhereTheyWereGiven) {
  fs::path dir = scratch("html-control");
  std::vector<RunRecord> runs = {make_record("armed", {{"outcome", "detected"}}, dir)};
  add_event(runs[0].history, 2.0, -1, "control", "control", {{"action", "arm"}, {"fault_id", "slow"}});
  add_event(runs[0].history, 3.0, -1, "control", "control", {{"action", "disarm"}, {"fault_id", 7}});
  const std::string html = render_html(SuiteInfo{}, runs);
  EXPECT_NE(html.find("<line class=\"control\""), std::string::npos);
  EXPECT_NE(html.find("<title>ncclfi arm slow (attempt 1)"), std::string::npos) << html;
  EXPECT_NE(html.find(">arm slow</text>"), std::string::npos);
  EXPECT_NE(html.find(">disarm 7</text>"), std::string::npos) << "a non-string fault id is shown as JSON";
}

// The timeline's geometry: the axis counts from the first injection, the fault window spans the
// first to the last injection of its fault, detections sit above exits in the same lane, attempts are
// labelled, and the zoom range covers the fault window.
TEST(Html, TimelineLanesWindowsAttemptsAndZoom) {
  fs::path dir = scratch("html-geometry");
  RunRecord r = make_record("geometry", {{"outcome", "detected"}}, dir);
  add_event(r.history, 0.1, 0, "harness", "launch", {});
  add_event(r.history, 1.5, 1, "net", "inject", {{"fault_id", "f1"}, {"kind", "drop"}});
  add_event(r.history, 6.0, 0, "harness", "launch", {}, 1);
  const std::string html = render_html(SuiteInfo{}, {r});
  auto attr = [&](size_t from, const std::string& name) {
    const size_t p = html.find(name + "=\"", from);
    EXPECT_NE(p, std::string::npos) << name;
    const size_t start = p + name.size() + 2;
    return html.substr(start, html.find('"', start) - start);
  };
  const size_t window = html.find("<rect class=\"fault-window\" data-fault-id=\"f1\"");
  ASSERT_NE(window, std::string::npos) << html;
  EXPECT_EQ(attr(window, "data-start-s"), "0.000");  // the first injection is the zero
  EXPECT_EQ(attr(window, "data-end-s"), "0.500");
  EXPECT_NE(html.find("s from the first injection"), std::string::npos);
  EXPECT_NE(html.find(">attempt 1</text>"), std::string::npos);
  EXPECT_NE(html.find(">attempt 2</text>"), std::string::npos);
  // Rank 0: its detection's top is above its exit's top.
  const size_t det = html.find("<path class=\"detection\" data-rank=\"0\"");
  const size_t ex = html.find("<rect class=\"exit\" data-rank=\"0\"");
  ASSERT_NE(det, std::string::npos);
  ASSERT_NE(ex, std::string::npos);
  EXPECT_LT(std::stod(attr(det, "data-y")) + 10, std::stod(attr(ex, "y")));
  // The zoom range holds the window and is narrower than the whole run.
  const size_t svg = html.find("<svg ");
  std::istringstream zoom(attr(svg, "data-zoom"));
  double z0 = 0, z1 = 0;
  zoom >> z0 >> z1;
  const double wx = std::stod(attr(window, "x")), ww = std::stod(attr(window, "width"));
  EXPECT_LE(z0, wx);
  EXPECT_GE(z1, wx + ww);
  EXPECT_LT(z1 - z0, 960 - 100);
  EXPECT_NE(html.find("data-ncclfi-ready"), std::string::npos);  // the script marks the page when it ran
}

TEST(Suite, WritesFilesAndRerendersFromRunDirs) {
  fs::path root = scratch("suite");
  std::vector<RunRecord> runs = {make_record("one", {{"outcome", "detected"}}, root / "runs" / "one" / "t1"),
                                 make_record("two", {{"outcome", "hung"}}, root / "runs" / "two" / "t1")};
  for (const auto& r : runs) write_verdict(r);
  SuiteInfo suite;
  suite.out_dir = root.string();
  auto files =
      write_suite_reports(suite, runs, {parse_report_request("junit=" + (root / "custom.xml").string())});
  EXPECT_TRUE(fs::exists(root / "summary.json"));
  EXPECT_TRUE(fs::exists(root / "custom.xml"));  // a copy: the suite's own junit.xml is there too
  EXPECT_EQ(slurp(root / "custom.xml"), slurp(root / "junit.xml"));
  EXPECT_TRUE(fs::exists(root / "report.html"));
  auto summary = nlohmann::json::parse(slurp(root / "summary.json"));
  EXPECT_EQ(summary["total"], 2);
  EXPECT_EQ(summary["passed"], 1);
  EXPECT_EQ(summary["failed"], 1);

  // A corrupt verdict becomes a harness error instead of aborting the re-render.
  fs::create_directories(root / "runs" / "three" / "t1");
  std::ofstream(root / "runs" / "three" / "t1" / "verdict.json") << "{ torn";
  auto loaded = load_runs((root / "runs").string());
  ASSERT_EQ(loaded.size(), 3u);
  EXPECT_EQ(loaded[0].scenario, "one");
  EXPECT_FALSE(loaded[1].harness_error.empty());  // sorted by run dir: one, three, two
  EXPECT_EQ(run_status(loaded[1]), RunStatus::kError);
  const std::string table = rerender_reports((root / "runs").string());
  EXPECT_NE(table.find("1 passed, 1 failed, 0 unknown, 0 skipped, 1 harness error(s)"), std::string::npos)
      << table;
  EXPECT_TRUE(fs::exists(root / "runs" / "report.html"));
  EXPECT_TRUE(fs::exists(root / "runs" / "junit.xml"));
  // A single run dir re-renders too.
  EXPECT_NE(rerender_reports((root / "runs" / "one" / "t1").string()).find("one"), std::string::npos);
  EXPECT_THROW(load_runs((root / "missing").string()), std::runtime_error);
}

}  // namespace
}  // namespace ncclfi::harness
