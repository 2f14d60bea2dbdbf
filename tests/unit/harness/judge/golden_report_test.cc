// Golden files: the SVG timeline and the drill report (Markdown and HTML) of fixed runs, byte for byte.
// They pin every element the renderers draw, so a change to their code that moves one byte is seen.
// After an intended change of output: NCCLFI_UPDATE_GOLDEN=1 ctest -R Golden, then review the diff.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "drill_report.h"
#include "history_builder.h"
#include "html_timeline.h"
#include "judge.h"

namespace ncclfi::harness {
namespace {

using namespace testing;
namespace fs = std::filesystem;

const fs::path kGoldenDir = fs::path(NCCLFI_SOURCE_DIR) / "tests" / "unit" / "harness" / "judge" / "golden";

void expect_golden(const std::string& name, const std::string& actual) {
  const fs::path file = kGoldenDir / name;
  if (const char* update = std::getenv("NCCLFI_UPDATE_GOLDEN"); update != nullptr && *update == '1') {
    std::ofstream(file, std::ios::binary) << actual;
    return;
  }
  std::ifstream in(file, std::ios::binary);
  ASSERT_TRUE(in) << file << " is missing (NCCLFI_UPDATE_GOLDEN=1 writes it)";
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(actual, expected.str()) << "differs from " << file;
}

void add_host_event(History& h, double s, int rank, const std::string& source, const std::string& event,
                    nlohmann::json fields, const std::string& host, int attempt = 0) {
  add_event(h, s, rank, source, event, std::move(fields), attempt);
  h.events.back().host = host;
}

void add_window(History& h, double s, int rank, const std::string& id, uint64_t window, const char* event,
                int attempt = 0) {
  add_host_event(h, s, rank, "net", event,
                 {{"fault_id", id}, {"kind", "stall"}, {"layer", "net"}, {"window", window}}, "node-b",
                 attempt);
}

// Three ranks on two hosts, two attempts: windows healed and not, a whole-job fault, many ops (sampled),
// the harness's deadline and restarts, arm and disarm, detections in and out of the lanes, every kind of
// exit.
History busy_history() {
  History h = make_history(3);
  h.attempts = 2;
  h.end_ns = at(12);
  add_host_event(h, 0.05, 0, "workload", "start", {}, "node-a");
  add_host_event(h, 0.05, 1, "workload", "start", {}, "node-b");
  add_event(h, 0.1, -1, "harness", "launch", {});
  add_event(h, 0.12, -1, "harness", "launch", {});
  for (int i = 0; i < 700; ++i)
    add_event(h, 0.2 + i * 0.005, 0, "workload", "op", {{"seq", i}, {"dur_us", 100 + (i * 37) % 900}});
  for (int i = 0; i < 5; ++i)
    add_event(h, 0.3 + i * 0.4, 1, "workload", "op", {{"seq", i}, {"dur_us", 50.5}});
  add_event(h, 0.4, 2, "workload", "op", {{"seq", 0}, {"dur_us", "not a number"}});
  add_window(h, 1.0, 1, "flap", 1, "inject");
  add_window(h, 1.3, 1, "flap", 1, "inject");
  add_window(h, 1.8, 1, "flap", 1, "heal");
  add_window(h, 2.5, 1, "flap", 2, "inject");
  add_event(h, 2.0, -1, "proc", "inject", {{"fault_id", "freeze"}, {"kind", "freeze"}, {"layer", "proc"}});
  add_event(h, 2.2, 2, "api", "inject",
            {{"fault_id", "f<&>"}, {"kind", "error"}, {"layer", "api"}, {"n", 3}});
  add_event(h, 2.6, -1, "control", "control", {{"action", "arm"}, {"fault_id", "slow"}});
  add_event(h, 2.9, -1, "control", "control", {{"action", "disarm"}, {"fault_id", 7}});
  add_detection(h, 0.9, 0, "nccl_error");  // before the first injection
  add_detection(h, 3.0, 0, "workload_watchdog");
  add_detection(h, 3.1, 7, "ras");  // a rank outside the job: drawn on the job's row
  add_event(h, 4.0, -1, "harness", "deadline", {});
  add_exit(h, 4.2, 0, 3);
  add_exit(h, 4.3, 1, std::nullopt, 9, true);
  add_exit(h, 4.3, 2, std::nullopt);
  add_event(h, 5.0, -1, "log", "restart", {}, 1);
  add_event(h, 5.1, -1, "harness", "restart", {}, 1);
  add_event(h, 6.0, -1, "harness", "launch", {}, 1);
  add_window(h, 6.5, 1, "flap", 1, "inject", 1);
  for (int i = 0; i < 4; ++i)
    add_event(h, 7.0 + i * 0.5, 0, "workload", "op", {{"seq", i}, {"dur_us", 80}}, 1);
  add_event(h, 9.5, 1, "workload", "done", {}, 1);
  all_exit(h, 10.0, 0, 1);
  add_exit(h, 10.1, -1, 0, std::nullopt, false, 1);
  return h;
}

RunRecord record_of(History h, const nlohmann::json& expect = nlohmann::json::object()) {
  RunRecord r;
  r.expect = parse_expectation(expect);
  r.history = std::move(h);
  return r;
}

// With an expected detection band (detection_s after the first injection).
TEST(Golden, TimelineOfABusyRun) {
  const RunRecord r = record_of(busy_history(), {{"detection_s", {{"min", 1.5}, {"max", 2.5}}}});
  expect_golden("timeline_busy.svg", timeline_svg(r, "busy<1>"));
}

// The header counts what the history counted as well as what it holds, and names where and when the run
// ran and which ncclfi ran it.
TEST(TimelineHeader, CountsHeldAndFoldedEventsAndNamesTheRun) {
  History h = busy_history();
  h.folded.push_back({0, 1, "net", "inject", 40, at(1), at(2)});
  h.folded.push_back({0, 0, "detection", "workload_watchdog", 5, at(3), at(3)});
  for (auto& e : h.events) {
    if (e.source == "harness") e.host = "harness-host";
  }
  const std::string header = timeline_header(record_of(h));
  for (const char* want :
       {"data-ranks=\"3\"", "data-attempts=\"2\"", "data-injections=\"46\"", "data-detections=\"8\"",
        "data-date=\"2023-11-14 22:13:20 UTC\"", "data-host=\"harness-host\"", "data-version=\"ncclfi "}) {
    EXPECT_NE(header.find(want), std::string::npos) << want << " not in " << header;
  }
}

// No injection (the axis counts from the start) and no world size (the lanes come from the ranks seen).
TEST(Golden, TimelineWithoutInjectionOrWorldSize) {
  History h = make_history(0);
  h.end_ns = at(0.05);
  add_event(h, 0.01, 1, "workload", "op", {{"seq", 0}, {"dur_us", 3}});
  add_event(h, 0.02, 1, "workload", "op", {{"seq", 1}, {"dur_us", 4}});
  add_detection(h, 0.03, 1, "workload_watchdog");
  add_exit(h, 0.04, 0, 0);
  add_exit(h, 0.045, 1, 1);
  std::string svg = timeline_svg(record_of(h), "quiet");
  svg += timeline_svg(record_of(make_history(2)), "empty");
  svg += timeline_svg(record_of(History{}), "none");
  expect_golden("timeline_quiet.svg", svg);
}

RunRecord busy_record() {
  RunRecord r;
  r.scenario = "drill-busy";
  r.summary = "a flapping | link";
  r.run_dir = "runs/drill-busy/1";
  r.expect = parse_expectation({{"outcome", "detected"}, {"detected_by", {"workload_watchdog"}}});
  r.history = busy_history();
  History& h = r.history;
  add_host_event(h, 0.5, 2, "agent", "injection_refused",
                 {{"layer", "proc"}, {"action", "signal"}, {"why", "not in the allowed hosts (node-a)"}},
                 "node-c");
  add_host_event(h, 0.6, 2, "net", "injection_refused", {{"layer", "net"}, {"allowed", "node-a,node-b"}},
                 "node-c");
  RankOutput out;
  out.rank = 2;
  out.host = "node-c";
  out.attempt = 1;
  out.last_lines = {"one", "two | three", std::string(200, 'x'), "four", "five", "six\nseven"};
  out.lines = 6000;
  out.dropped = 40;
  out.skipped_lines = 2;
  h.rank_output.push_back(out);
  RankOutput empty;
  empty.rank = 0;
  h.rank_output.push_back(empty);
  r.judgement = judge(h, r.expect);
  r.harness_error = "the run's events could not all be read";
  return r;
}

TEST(Golden, DrillReportOfABusyRun) {
  const RunRecord r = busy_record();
  expect_golden("drill_busy.md", drill_report_markdown(r));
  expect_golden("drill_busy.html", drill_report_html(r));
}

// Recovery in its other states: nothing injected; no progress after the faults; not completed.
TEST(Golden, DrillReportsOfQuietRuns) {
  std::string md;
  RunRecord quiet;
  quiet.scenario = "drill-quiet";
  quiet.history = make_history(2);
  all_exit(quiet.history, 4, 0);
  quiet.judgement = judge(quiet.history, quiet.expect);
  md += drill_report_markdown(quiet);

  RunRecord stuck = quiet;
  stuck.scenario = "drill-stuck";
  add_inject(stuck.history, 1.0, 1);
  stuck.judgement = judge(stuck.history, stuck.expect);
  md += drill_report_markdown(stuck);

  RunRecord failed;
  failed.scenario = "drill-failed";
  failed.skipped = true;
  failed.skip_reason = "needs 2 GPUs";
  failed.history = make_history(2);
  add_inject(failed.history, 1.0, 1);
  failed.judgement = judge(failed.history, failed.expect);
  md += drill_report_markdown(failed);
  expect_golden("drill_quiet.md", md);
}

}  // namespace
}  // namespace ncclfi::harness
