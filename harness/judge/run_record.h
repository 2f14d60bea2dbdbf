// A scenario run as the reports and the exit status see it (RunRecord), and its status: run_status()
// is the one function every report and ncclfi's exit status use (status.cc).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "expectation.h"
#include "history.h"
#include "judge.h"

namespace ncclfi::harness {

// Where a job's GPU ranks ran. Empty placement: the job needs no GPU.
struct GpuMode {
  std::string placement;  // "2 ranks on 1 GPU (shared: a host per rank, network path)"
  bool shared = false;    // several ranks per GPU, over the network path
  std::string mps;        // shared: "own daemon per attempt", or why there was none
};

// What `ncclfi diagnose` makes of a run's logs alone (no plan, no injections), beside the truth the
// harness knows: the reports show both, so a reader learns how far the logs alone get.
struct LogDiagnosis {
  bool failure = false;  // the logs show a failure
  std::vector<int> ranks;
  std::string host, site, symptom;  // site "undecided" when sites tie
  double confidence = 0;
  std::string first_failure;  // "file:line: the line"
  std::vector<int> truth_ranks;
  std::string truth_site, truth_symptom;  // truth_site "" where the fault models no site
  // Whether the diagnosis agrees with the truth; absent where there is nothing to compare.
  std::optional<bool> ranks_agree, site_agrees, symptom_agrees;
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
  std::string harness_error;              // set when the harness itself failed on this run
  GpuMode gpu;                            // where the GPU ranks ran (a verdict holds only for that placement)
  std::optional<LogDiagnosis> diagnosis;  // absent for a skipped run or where the logs could not be read
  // The suite kept only the history's span (trim_history): the events, detections and exits are in the
  // run directory's verdict.json, not here, and the suite's HTML page points there instead of drawing.
  bool history_trimmed = false;
};

// A full history costs about 200 KB. A suite of more runs than this spools its records to disk as they
// end (apps/suite_records.h) and keeps a run's full history only when it did not pass; every run's own
// directory still has all of it.
inline constexpr size_t kSuiteRunsWithFullHistory = 100;
// Whether a suite of `suite_runs` runs keeps `record`'s full history in memory.
bool suite_keeps_full_history(size_t suite_runs, const RunRecord& record);
// Drops the history's events, detections, exits and outputs; keeps its scenario, span, world size and
// attempts (what the suite's tables and times read). Sets history_trimmed.
void trim_history(RunRecord& record);

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

}  // namespace ncclfi::harness
