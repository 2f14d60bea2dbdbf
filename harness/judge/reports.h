// Reports: verdict.json per run; a console table and a live progress line; per suite summary.json,
// junit.xml and a self-contained report.html (inline CSS/JS/SVG, nothing fetched). Every report is a
// Report (one file each: console_report.cc, summary_json.cc, junit_report.cc, html_report.cc,
// verdict_json.cc); every run's status comes from run_status() (status.cc), the one place that
// decides it. Files are written atomically (temp file in the same directory, fsync, rename), so an
// interrupted run leaves either the old file or the new one, never half of one.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "expectation.h"
#include "history.h"
#include "judge.h"

namespace ncclfi::harness {

// Writes `content` to `path` atomically (creates parent directories). Throws std::runtime_error
// naming the path and errno text on failure; never leaves the temp file behind.
void write_file_atomic(const std::string& path, const std::string& content);

// Where a job's GPU ranks ran. Empty placement: the job needs no GPU.
struct GpuMode {
  std::string placement;  // "2 ranks on 1 GPU (shared: a host per rank, network path)"
  bool shared = false;    // several ranks per GPU, over the network path
  std::string mps;        // shared: "own daemon per attempt", or why there was none
};

// Everything known about one scenario run: what the reports are made of.
struct RunRecord {
  std::string scenario;  // name
  std::string summary;   // the scenario's one-line summary
  std::vector<std::string> tags;
  std::string run_dir;  // runs/<scenario>/<UTC time>/
  Expectation expect;
  History history;
  Judgement judgement;   // meaningless when skipped
  bool skipped = false;  // not run (e.g. GPU scenario without GPUs); skip_reason says why
  std::string skip_reason;
  std::string harness_error;  // set when the harness itself failed on this run
  GpuMode gpu;                // where the GPU ranks ran (a verdict holds only for that placement)
};

// ---- the status of a run: the one function every report and the exit code use ----
enum class RunStatus { kPass, kFail, kUnknown, kSkipped, kError };
// "pass", "fail", "unknown", "skipped", "error"
std::string_view to_string(RunStatus status);
// skipped > harness error > the judge's verdict.
RunStatus run_status(const RunRecord& record);
struct StatusCounts {
  size_t pass = 0, fail = 0, unknown = 0, skipped = 0, error = 0;
  size_t total() const { return pass + fail + unknown + skipped + error; }
};
StatusCounts count_statuses(const std::vector<RunRecord>& records);
// "15 scenario(s): 13 passed, 1 failed, 0 unknown, 1 skipped, 0 errors"
std::string counts_text(const StatusCounts& counts);

// verdict.json: {scenario, summary, tags, run_dir, expect, status, verdict, outcome, mechanisms,
// detection_s, restarts, checks[], reasons[], skipped, skip_reason, harness_error, gpu{placement, shared,
// mps} (GPU jobs), judgement{...}, history{...}}. A skipped run has no verdict, outcome, judgement or
// history. The history is included so `ncclfi report` can re-render without re-running.
nlohmann::json verdict_json(const RunRecord& record);
RunRecord run_record_from_json(const nlohmann::json& doc);  // throws nlohmann::json::exception
void write_verdict(const RunRecord& record);                // <run_dir>/verdict.json

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
// "[3/15] name: pass (detected(workload_watchdog))  runs/name/..." or "...: skipped (needs 2 GPUs)".
std::string format_run_line(const RunRecord& record, size_t index, size_t total);

// The final table: scenario | expected | observed | detection | status (expected and observed are
// clipped to fit; the failure details below give them whole), then the skipped runs with their
// reasons, the failure details, the pass rates when a scenario ran more than once, and a totals line.
// `color` adds ANSI colours to the status column.
std::string format_final_table(const std::vector<RunRecord>& records, bool color = false);
// Like pytest's short summary: for each failing, unknown or errored run, its whole expectation and
// observation, each check that did not pass with its reason, and where its report is
// (<run_dir>/verdict.json). Empty when every run passed or was skipped.
std::string format_failure_details(const std::vector<RunRecord>& records);

// ---- repeated runs (`ncclfi run --repeat N`) ----
struct PassRate {
  std::string scenario;
  size_t runs = 0;    // runs that were not skipped
  size_t passed = 0;  // of those, the ones whose status is pass
  bool flaky() const { return passed > 0 && passed < runs; }
};
// Per scenario in the order first seen.
std::vector<PassRate> pass_rates(const std::vector<RunRecord>& records);
// True when some scenario ran more than once (the suite was repeated).
bool has_repeats(const std::vector<PassRate>& rates);
// "net-delay-degraded  4/5 passed (80%), flaky" lines under a heading; empty without repeats.
std::string format_pass_rates(const std::vector<PassRate>& rates);

// ---- suite files ----
struct SuiteInfo {
  std::string name = "ncclfi";
  std::string out_dir;  // where summary.json / junit.xml / report.html go
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};
struct Suite {
  SuiteInfo info;
  const std::vector<RunRecord>& records;
};

nlohmann::json summary_json(const SuiteInfo& suite, const std::vector<RunRecord>& records);
// JUnit XML: <testsuites><testsuite name tests failures errors skipped time><testcase classname name
// time> with <failure> for fail, <error> for unknown and harness errors, <skipped message=reason/>
// for skipped, <system-out> with the checks. Everything XML-escaped; invalid XML characters dropped.
std::string render_junit(const SuiteInfo& suite, const std::vector<RunRecord>& records);
// report.html: summary table, then per scenario a per-rank SVG timeline (ops, injections,
// detections, exits, restarts) and the checks. Self-contained.
std::string render_html(const SuiteInfo& suite, const std::vector<RunRecord>& records);

// The suite in Prometheus' text exposition format: per scenario run its status, detection time,
// restarts and duration (labels scenario, run), and the suite's counts (metrics_report.cc).
std::string render_prometheus(const SuiteInfo& suite, const std::vector<RunRecord>& records);

// One report format. A new format is one file with a Report and a make_*_report() declared here.
class Report {
 public:
  virtual ~Report() = default;
  virtual void write(const Suite& suite) = 0;
  // The files it wrote (empty for the console).
  virtual std::vector<std::string> files() const { return {}; }
};

// A report rendered to text and written to each of `paths` (atomically).
class FileReport : public Report {
 public:
  explicit FileReport(std::vector<std::string> paths) : paths_(std::move(paths)) {}
  void write(const Suite& suite) final;
  std::vector<std::string> files() const override { return paths_; }

 protected:
  virtual std::string render(const Suite& suite) const = 0;

 private:
  std::vector<std::string> paths_;
};

std::unique_ptr<Report> make_console_report(std::ostream& out, bool color);
std::unique_ptr<Report> make_summary_json_report(std::vector<std::string> paths);
std::unique_ptr<Report> make_junit_report(std::vector<std::string> paths);
std::unique_ptr<Report> make_html_report(std::vector<std::string> paths);
std::unique_ptr<Report> make_prometheus_report(std::vector<std::string> paths);
std::unique_ptr<Report> make_verdict_json_report();  // <run_dir>/verdict.json of every run with one

struct SuiteFiles {
  std::string summary_json;
  std::string junit_xml;
  std::string report_html;
  std::vector<std::string> copies;  // --junit / --html copies
};
// Writes summary.json, junit.xml and report.html into suite.out_dir (atomically); `junit_copy` and
// `html_copy`, when not empty, receive copies of those two as well (--junit / --html).
SuiteFiles write_suite_reports(const SuiteInfo& suite, const std::vector<RunRecord>& records,
                               const std::string& junit_copy = "", const std::string& html_copy = "");

// ---- re-rendering (`ncclfi report RUN_DIR`) ----
// Loads every verdict.json at or under `dir` (a run dir, a suite dir, or runs/), sorted by run_dir.
// Unreadable verdict files become records with harness_error set. Throws std::runtime_error when
// `dir` does not exist.
std::vector<RunRecord> load_runs(const std::string& dir);
// load_runs + write_suite_reports into `dir`; returns the final table text.
std::string rerender_reports(const std::string& dir, bool color = false);

}  // namespace ncclfi::harness
