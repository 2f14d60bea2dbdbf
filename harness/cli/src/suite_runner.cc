#include "suite_runner.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "drill_plan.h"
#include "interrupt.h"
#include "ncclfi/event_log.h"
#include "run_dir.h"
#include "scenario.h"
#include "scenario_runner.h"
#include "terminal.h"

namespace ncclfi::cli {

namespace {

bool has_any_tag(const Scenario& s, const std::vector<std::string>& tags) {
  if (tags.empty()) return true;
  for (const auto& t : tags) {
    if (std::find(s.tags.begin(), s.tags.end(), t) != s.tags.end() || s.name == t) return true;
  }
  return false;
}

size_t terminal_width() {
  if (const char* cols = std::getenv("COLUMNS")) {
    const int n = std::atoi(cols);
    if (n > 20) return static_cast<size_t>(n);
  }
  return 120;
}

// The allow-list this run enforces: the environment's and --allowed-hosts' entries together.
AllowList run_allow_list(const SuiteOptions& options) {
  AllowList list = allow_list_from_env();
  if (!options.allowed_hosts_file.empty()) {
    const AllowList file = read_allow_list_file(options.allowed_hosts_file);
    list.configured = true;
    if (list.problem.empty()) list.problem = file.problem;
    list.patterns.insert(list.patterns.end(), file.patterns.begin(), file.patterns.end());
  }
  return list;
}

// Drill safety before anything launches: the blast-radius limits of the command line and the allow-list
// of hosts. Prints each refusal; returns false when some scenario may not run.
bool drill_checks_pass(const std::vector<Scenario>& scenarios, const SuiteOptions& options,
                       const AllowList& list) {
  bool ok = true;
  if (!list.problem.empty()) {
    std::cerr << "ncclfi run: " << list.problem << ": no host may inject, nothing is launched\n";
    ok = false;
  }
  const BlastLimits cli{options.max_faulted_ranks, options.max_faulted_hosts};
  for (const Scenario& s : scenarios) {
    std::vector<ScenarioError::Problem> problems;
    check_blast_radius(s, cli, problems);
    if (!problems.empty()) {
      std::cerr << ScenarioError(s.file, problems).what() << "\n";
      ok = false;
    }
    if (s.plan.faults.empty()) continue;  // nothing to inject: allowed anywhere
    if (const std::string why = allow_list_refusal(s, list); !why.empty()) {
      std::cerr << s.file << ": " << why << ": nothing is launched\n";
      ok = false;
    }
  }
  return ok;
}

void print_dry_run(const std::vector<Scenario>& scenarios, const SuiteOptions& options,
                   const AllowList& list) {
  const BlastLimits cli{options.max_faulted_ranks, options.max_faulted_hosts};
  nlohmann::json plans = nlohmann::json::array();
  for (const Scenario& s : scenarios) {
    auto plan = dry_run_json(s, list, cli);
    if (!options.json) std::cout << dry_run_text(plan);
    plans.push_back(std::move(plan));
  }
  if (options.json) std::cout << nlohmann::json{{"dry_run", true}, {"scenarios", plans}}.dump(2) << "\n";
}

}  // namespace

int exit_status_for(const std::vector<harness::RunRecord>& records) {
  const harness::StatusCounts counts = harness::count_statuses(records);
  if (counts.error > 0) return kHarnessError;
  if (counts.fail > 0 || counts.unknown > 0) return kSomeFailed;
  return kAllPassed;
}

SuiteOutcome run_suite(const SuiteOptions& options) {
  SuiteOutcome outcome;
  // Everything is loaded and validated before the first launch.
  std::vector<Scenario> scenarios;
  bool bad = false;
  for (const auto& file : expand_scenario_paths(options.paths)) {
    try {
      Scenario s = load_scenario(file, options.params);
      if (has_any_tag(s, options.filter_tags)) scenarios.push_back(std::move(s));
    } catch (const ScenarioError& e) {
      std::cerr << e.what() << "\n";
      bad = true;
    }
  }
  if (bad) {
    outcome.exit_status = kBadInput;
    return outcome;
  }
  if (scenarios.empty()) {
    std::cerr << "ncclfi: no scenario to run (check the paths and --filter)\n";
    outcome.exit_status = kBadInput;
    return outcome;
  }
  const AllowList allow_list = run_allow_list(options);
  const bool drill_ok = drill_checks_pass(scenarios, options, allow_list);
  if (options.dry_run) {  // nothing is launched and no directory is made
    print_dry_run(scenarios, options, allow_list);
    outcome.exit_status = drill_ok ? kAllPassed : kBadInput;
    return outcome;
  }
  if (!drill_ok) {
    outcome.exit_status = kBadInput;
    return outcome;
  }
  const bool tty = isatty(STDERR_FILENO) != 0 && !options.quiet;
  const int gpus = count_visible_gpus();
  harness::SuiteInfo suite;
  suite.start_ns = Clock::wall_ns();
  suite.out_dir = make_suite_dir(options.out_root);
  ScenarioRunOptions run_options;
  run_options.out_root = options.out_root;
  run_options.install = Installation::discover();
  const size_t repeat = static_cast<size_t>(std::max(1, options.repeat));
  const size_t total = scenarios.size() * repeat;
  run_options.total = total;
  run_options.mps = options.mps;
  if (allow_list.configured) {
    std::string entries;
    for (const auto& p : allow_list.patterns) entries += (entries.empty() ? "" : ",") + p;
    run_options.allowed_hosts = entries;
  }
  if (tty) {
    run_options.progress = [](const harness::ProgressState& st) {
      std::cerr << "\r\033[K" << harness::format_progress_line(st, terminal_width()) << std::flush;
    };
  }
  size_t index = 0;
  for (const Scenario& s : scenarios) {
    // A scenario this host cannot run is reported skipped once, however many repeats were asked for.
    const GpuPlacement placement = place_on_gpus(s, gpus, options.gpu_sharing);
    const std::string why = !placement.skip.empty() ? placement.skip : unmet_requirement(s);
    if (!why.empty()) {
      harness::RunRecord skipped;
      skipped.scenario = s.name;
      skipped.summary = s.summary;
      skipped.tags = s.tags;
      skipped.expect = s.expectation;
      skipped.skipped = true;
      skipped.skip_reason = why;
      index += repeat;
      if (!options.quiet) std::cerr << harness::format_run_line(skipped, index, total) << "\n";
      outcome.records.push_back(std::move(skipped));
      continue;
    }
    run_options.gpu = placement;
    for (size_t round = 0; round < repeat && !interrupted(); ++round) {
      run_options.index = ++index;
      auto record = run_scenario(s, run_options);
      if (tty) std::cerr << "\r\033[K";
      if (!options.quiet) std::cerr << harness::format_run_line(record, index, total) << "\n";
      outcome.records.push_back(std::move(record));
    }
    if (interrupted()) break;
  }
  suite.end_ns = Clock::wall_ns();
  try {
    const auto files =
        harness::write_suite_reports(suite, outcome.records, options.junit_path, options.html_path);
    outcome.suite_dir = suite.out_dir;
    if (!options.metrics_path.empty())
      harness::make_prometheus_report({options.metrics_path})->write({suite, outcome.records});
    if (options.json) {
      std::cout << harness::summary_json(suite, outcome.records)
                       .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                << "\n";
    } else {
      harness::make_console_report(std::cout, use_color(STDOUT_FILENO))->write({suite, outcome.records});
      std::cout << "reports: " << files.summary_json << " " << files.junit_xml << " " << files.report_html;
      for (const auto& copy : files.copies) std::cout << " " << copy;
      if (!options.metrics_path.empty()) std::cout << " " << options.metrics_path;
      std::cout << "\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "ncclfi: cannot write the suite reports: " << e.what() << "\n";
    outcome.exit_status = kHarnessError;
    return outcome;
  }
  outcome.exit_status = exit_status_for(outcome.records);
  if (interrupted() && outcome.exit_status != kHarnessError) outcome.exit_status = kHarnessError;
  return outcome;
}

}  // namespace ncclfi::cli
