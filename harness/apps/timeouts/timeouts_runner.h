// `ncclfi timeouts SCENARIO`: measures the user's healthy job, then runs the fault matrix (settings x
// faults x trials) on it and writes the matrix (console, timeouts.json, timeouts.html). The model, the
// reading of each trial and the recommendation are timeouts_matrix.h's; this file runs the trials.
#pragma once

#include <string>
#include <vector>

#include "gpu_placement.h"
#include "scenario_params.h"

namespace ncclfi::cli {

struct TimeoutsOptions {
  std::string scenario_path;         // the healthy job (no faults; it must run clean)
  ParamOverrides params;             // --param NAME=VALUE for the job's own placeholders
  std::string settings_path;         // empty: the default settings for PyTorch jobs (data_dir)
  std::vector<std::string> faults;   // empty: every fault of the menu
  int trials = 3;                    // per cell
  int healthy_trials = 0;            // 0: as many as `trials`
  double stall_s = 0;                // 0: twice the largest healthy step (at least 1 s)
  double margin = 3.0;               // recommended timeout = margin x the largest healthy step
  int rank = -1;                     // the faulted rank; -1: the last
  int after_calls = 20;              // api faults fire at this all_reduce of that rank
  double deadline_s = 0;             // per trial; 0: the scenario's deadline_s
  std::string out_root = "runs";     // <out_root>/timeouts/<UTC time>/
  std::string json_path, html_path;  // copies of timeouts.json / timeouts.html
  bool quiet = false;
  GpuSharing gpu_sharing = GpuSharing::kAuto;
  bool mps = true;
};

// The default settings file: PREFIX/share/ncclfi/workloads/torch/timeout-settings.json.
std::string default_timeout_settings_path();

// Runs everything; returns the exit status (0 matrix complete with no finding, 1 complete with
// findings or a healthy job that was not clean, 2 bad input, 3 harness error or interrupted).
int run_timeouts(const TimeoutsOptions& options);

}  // namespace ncclfi::cli
