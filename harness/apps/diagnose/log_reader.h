// The files `ncclfi diagnose` reads: a run directory of ncclfi (its attempts' rank, launcher and agent
// logs, never its plan, events or verdict), any directory of plain logs (every regular file, recursively)
// or single files, each read whole within limits (bounded_input.h).
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace ncclfi::diagnose {

constexpr size_t kMaxLogFileBytes = 16 << 20;
constexpr size_t kMaxLogFiles = 2000;

struct InputFile {
  std::string path;   // as found
  std::string shown;  // relative to the PATH it came from (its name for a single file)
  int attempt = -1;   // the attempt-N folder on its path (a run directory's, a lab workspace's), else -1
};

struct InputSet {
  std::vector<InputFile> files;
  std::vector<std::string> skipped;  // "path: why" (not a regular file, too large, binary, ...)
  bool run_dir = false;              // some PATH was a run directory of ncclfi
  // A run directory's fault-free runs of the same job (baseline-N/attempt-*/*.log), by run ("baseline-1"):
  // not the job's output, only its pace to compare with (reference_pace.h).
  std::vector<std::pair<std::string, InputFile>> references;
};

// The files of `paths`, sorted within each PATH. Throws std::invalid_argument for a PATH that does not
// exist or is neither a file nor a directory, and when there are more than kMaxLogFiles files.
InputSet collect_inputs(const std::vector<std::string>& paths);

// Whether `dir` is a run directory of ncclfi (verdict.json, plan.json or events.jsonl beside attempt-N/).
bool is_run_dir(const std::string& dir);

}  // namespace ncclfi::diagnose
