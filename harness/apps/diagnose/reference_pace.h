// A job that ran clean but slow: its ranks' summary lines ("rank 1/4: 32 iterations of 65536 bytes in
// 2.383 s", ncclfi-cpu-ring's and ncclfi-workload's last line) against the same lines of fault-free
// reference runs of the same job (a run directory's baseline-N/). Nothing in a slow job's own logs says it
// is slow; only a reference does, as last week's run does for an operator.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "log_reader.h"

namespace ncclfi::diagnose {

// A job counts as slow at this many times its slowest reference run's time per iteration: a clean run's
// noise on a loaded host is well inside it (the judge's own noise test decides a verdict; this only
// names the symptom).
inline constexpr double kSlowerThanReference = 3.0;

struct SlowJob {
  double seconds_per_iteration = 0;            // the job's, the median over its ranks
  double reference_seconds_per_iteration = 0;  // the slowest reference run's median
  size_t references = 0;                       // reference runs read
  std::string file;                            // the job's slowest summary line, where it is
  size_t line = 0;
  std::string text;
};

// The job's pace against its references, when it is kSlowerThanReference or more slower; nullopt when
// it is not, or when either side printed no summary line.
std::optional<SlowJob> slower_than_references(const InputSet& inputs);

}  // namespace ncclfi::diagnose
