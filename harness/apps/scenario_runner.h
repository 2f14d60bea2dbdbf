// One scenario from start to verdict: the run directory, the fault-free baseline runs when the
// expectation needs them (baseline_runs of them, for the noise estimate), the attempts under the
// restart policy, the judgement and verdict.json.
#pragma once

#include <optional>
#include <string>

#include "attempt_runner.h"
#include "host_env.h"
#include "launch_context.h"
#include "launcher_spec.h"
#include "reports.h"
#include "scenario.h"

namespace ncclfi::cli {

struct ScenarioRunOptions {
  std::string out_root = "runs";  // runs/<scenario>/<UTC time>/
  Installation install;
  size_t index = 1, total = 1;               // position in the suite, for the progress line
  ProgressCallback progress;                 // may be empty
  GpuPlacement gpu;                          // where the GPU ranks go (shared-GPU mode included)
  bool mps = true;                           // shared mode: run ncclfi's own MPS daemon when the host has MPS
  std::optional<std::string> allowed_hosts;  // the drill's allow-list for the ranks (NCCLFI_ALLOWED_HOSTS)
};

// Runs `scenario` and returns its record (verdict.json already written). Never throws: a harness
// failure becomes record.harness_error (status "error").
harness::RunRecord run_scenario(const Scenario& scenario, const ScenarioRunOptions& options);

}  // namespace ncclfi::cli
