// Reports: verdict.json per run; a console table and a live progress line; per suite summary.json,
// junit.xml and a self-contained report.html (inline CSS/JS/SVG, nothing fetched). Every file is
// written atomically (temp file in the same directory, fsync, rename), so an interrupted run leaves
// either the old file or the new one, never half of one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "history.h"
#include "judge.h"

namespace ncclfi::harness {

// Writes `content` to `path` atomically (creates parent directories). Throws std::runtime_error
// naming the path and errno text on failure; never leaves the temp file behind.
void write_file_atomic(const std::string& path, const std::string& content);

// Everything known about one scenario run: what the reports are made of.
struct RunRecord {
  std::string scenario;  // name
  std::string summary;   // the scenario's one-line summary
  std::vector<std::string> tags;
  std::string run_dir;  // runs/<scenario>/<UTC time>/
  nlohmann::json expect = nlohmann::json::object();
  History history;
  Judgement judgement;
  bool skipped = false;  // not run (e.g. GPU scenario without GPUs); skip_reason says why
  std::string skip_reason;
  std::string harness_error;  // set when the harness itself failed on this run (verdict unknown)
};

// verdict.json: {scenario, summary, tags, run_dir, expect, verdict, outcome, mechanisms,
// detection_s, restarts, checks[], reasons[], skipped, harness_error, judgement{...}, history{...}}.
// The history is included so `ncclfi report` can re-render without re-running.
nlohmann::json verdict_json(const RunRecord& record);
RunRecord run_record_from_json(const nlohmann::json& doc);  // throws nlohmann::json::exception
void write_verdict(const RunRecord& record);                // <run_dir>/verdict.json

// "drop1 detected(workload_watchdog) 3.02s" style short strings used by table and reports.
std::string expected_summary(const nlohmann::json& expect);
std::string observed_summary(const Judgement& judgement);
std::string format_seconds(std::optional<double> seconds);  // "3.02s" or "-"

// ---- console ----
struct ProgressState {
  size_t index = 0;  // 1-based position in the suite
  size_t total = 0;
  std::string scenario;
  int attempt = 0;
  int ranks_running = 0;
  int ranks_total = 0;
  double elapsed_s = 0;
  double deadline_s = 0;
  int injections = 0;
  std::vector<std::string> detections;  // mechanisms seen so far
  std::string phase;                    // "launching", "running", "baseline", "teardown", "judging"
};
// One line, no newline, at most `width` columns (truncated with "..."); meant to be redrawn with "\r".
std::string format_progress_line(const ProgressState& state, size_t width = 120);

// The final table: scenario | expected | observed | detection | verdict, then a totals line.
// `color` adds ANSI colours to the verdict column.
std::string format_final_table(const std::vector<RunRecord>& records, bool color = false);

// ---- suite files ----
struct SuiteInfo {
  std::string name = "ncclfi";
  std::string out_dir;  // where summary.json / junit.xml / report.html go
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};
nlohmann::json summary_json(const SuiteInfo& suite, const std::vector<RunRecord>& records);
// JUnit XML: <testsuites><testsuite name tests failures errors skipped time><testcase classname name
// time> with <failure message type> for fail, <error> for unknown / harness errors, <skipped/> for
// skipped, <system-out> with the checks. Everything XML-escaped; invalid XML characters dropped.
std::string render_junit(const SuiteInfo& suite, const std::vector<RunRecord>& records);
// report.html: summary table, then per scenario a per-rank SVG timeline (ops, injections,
// detections, exits, restarts) and the checks. Self-contained.
std::string render_html(const SuiteInfo& suite, const std::vector<RunRecord>& records);

struct SuiteFiles {
  std::string summary_json;
  std::string junit_xml;
  std::string report_html;
};
// Writes summary.json, junit.xml and report.html into suite.out_dir (atomically); `junit_path` and
// `html_path`, when not empty, override where those two go (--junit / --html).
SuiteFiles write_suite_reports(const SuiteInfo& suite, const std::vector<RunRecord>& records,
                               const std::string& junit_path = "", const std::string& html_path = "");

// ---- re-rendering (`ncclfi report RUN_DIR`) ----
// Loads every verdict.json at or under `dir` (a run dir, a suite dir, or runs/), sorted by run_dir.
// Unreadable verdict files become records with harness_error set. Throws std::runtime_error when
// `dir` does not exist.
std::vector<RunRecord> load_runs(const std::string& dir);
// load_runs + write_suite_reports into `dir`; returns the final table text.
std::string rerender_reports(const std::string& dir, bool color = false);

}  // namespace ncclfi::harness
