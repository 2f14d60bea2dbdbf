#include "suite_runner.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>

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
