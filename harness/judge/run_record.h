// A scenario run as the reports and the exit status see it (RunRecord), and its status: run_status()
// is the one function every report and ncclfi's exit status use (status.cc).
#pragma once

#include <cstddef>
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

}  // namespace ncclfi::harness
