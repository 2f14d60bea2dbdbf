// `ncclfi run`: validates every scenario first (nothing launches if one is bad), runs them one after
// the other with a live progress line, writes the suite reports and prints the final table.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "exit_status.h"
#include "gpu_placement.h"
#include "report_spec.h"
#include "reports.h"

namespace ncclfi::cli {

struct SuiteOptions {
  std::vector<std::string> paths;
  std::string out_root = "runs";
  std::vector<harness::ReportRequest> reports;  // --report NAME[=PATH] (--NAME PATH): beyond the suite's own
  std::vector<std::string> filter_tags;         // run scenarios having any of these tags
  bool quiet = false;                           // no progress line
  GpuSharing gpu_sharing = GpuSharing::kAuto;
  bool mps = true;  // shared-GPU mode: ncclfi's own MPS daemon where the host has MPS
  std::map<std::string, std::string> params;  // --param NAME=VALUE for {param:NAME} placeholders
  int repeat = 1;                             // runs of each scenario (--repeat): pass rate per scenario
  bool json = false;                          // summary.json on stdout instead of the table
  // Drill safety (drill_plan.h): print what would be injected and launch nothing; the allow-list file
  // (on top of NCCLFI_ALLOWED_HOSTS / NCCLFI_ALLOWED_HOSTS_FILE); limits on top of each scenario's.
  bool dry_run = false;
  std::string allowed_hosts_file;
  std::optional<int> max_faulted_ranks, max_faulted_hosts;
};

struct SuiteOutcome {
  int exit_status = kAllPassed;
  std::vector<harness::RunRecord> records;
  std::string suite_dir;
};

SuiteOutcome run_suite(const SuiteOptions& options);
// The exit status for a set of records, from harness::run_status(): a harness error gives 3, a fail
// or unknown 1, only passes and skips 0.
int exit_status_for(const std::vector<harness::RunRecord>& records);

}  // namespace ncclfi::cli
