// Reports: verdict.json per run; a console table and a live progress line; per suite the formats of
// report_spec.h (summary.json, junit.xml, a self-contained report.html, Prometheus metrics: one file each).
// Every run's status comes from run_status() (judge/run_record.h), the one place that decides it. Files are
// written atomically (atomic_file.h), so an interrupted run leaves either the old file or the new one, never
// half of one.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "atomic_file.h"
#include "expectation.h"
#include "history.h"
#include "judge.h"
#include "progress.h"
#include "run_record.h"
#include "text_format.h"

namespace ncclfi::harness {

// verdict.json: {scenario, summary, tags, run_dir, expect, status, verdict, outcome, mechanisms,
// detection_s, restarts, checks[], reasons[], skipped, skip_reason, harness_error, gpu{placement, shared,
// mps} (GPU jobs), judgement{...}, history{...}}. A skipped run has no verdict, outcome, judgement or
// history. The history is included so `ncclfi report` can re-render without re-running.
nlohmann::json verdict_json(const RunRecord& record);
RunRecord run_record_from_json(const nlohmann::json& doc);  // throws nlohmann::json::exception
void write_verdict(const RunRecord& record);                // <run_dir>/verdict.json

// ---- console ----
// The live progress line (ProgressState: progress.h). One line, no newline, at most `width` - 1 columns
// (a line that fills the last column makes the terminal wrap it), meant to be redrawn with "\r" and
// erase-line: the least useful parts are left out first (what was detected, the injections, the ranks),
// then the rest is cut with "...". `width` 0: whole.
std::string format_progress_line(const ProgressState& state, size_t width);
// "[3/15] name: pass (detected(workload_watchdog))  runs/name/..." or "...: skipped (needs 2 GPUs)".
std::string format_run_line(const RunRecord& record, size_t index, size_t total);

// How the console's final table is laid out.
struct ConsoleStyle {
  bool color = false;       // ANSI colours in the status column
  size_t width = 0;         // the columns it may fill (terminal.h: output_width); 0: no limit, nothing cut
  std::string html_report;  // the suite's report.html, named under each failure ("": none)
};

// The final table: scenario | expected | observed | detection | status, fitted to the width (expected and
// observed are cut first, then left out: expected, then observed; the failure details below give them
// whole), then the skipped runs with their reasons, the failure details, the pass rates when a scenario
// ran more than once, and a totals line.
std::string format_final_table(const std::vector<RunRecord>& records, const ConsoleStyle& style);
inline std::string format_final_table(const std::vector<RunRecord>& records, bool color = false) {
  return format_final_table(records, ConsoleStyle{color, 0, ""});
}
// Like pytest's short summary: for each failing, unknown or errored run, its whole expectation and
// observation; where the faults were injected (ranks and hosts); who noticed first, on which rank, and
// the last lines of that rank's output; each check that did not pass with its reason; and where its
// reports are (<run_dir>/verdict.json, the suite's report.html). Wrapped to style.width. Empty when
// every run passed or was skipped.
std::string format_failure_details(const std::vector<RunRecord>& records, const ConsoleStyle& style = {});
// Under the failures: each run's notes (settings NCCL did not read, ...), passed runs too; empty when none
// has any.
std::string format_notes(const std::vector<RunRecord>& records, const ConsoleStyle& style = {});

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

// ---- re-rendering (`ncclfi report RUN_DIR`) ----
// Loads every verdict.json at or under `dir` (a run dir, a suite dir, or runs/), sorted by run_dir.
// Unreadable verdict files become records with harness_error set. Throws std::runtime_error when
// `dir` does not exist.
std::vector<RunRecord> load_runs(const std::string& dir);
}  // namespace ncclfi::harness
