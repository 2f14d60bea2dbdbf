#include "suite_runner.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <optional>

#include "console_text.h"
#include "drill_plan.h"
#include "interrupt.h"
#include "ncclfi/event_log.h"
#include "run_dir.h"
#include "scenario.h"
#include "scenario_filter.h"
#include "scenario_runner.h"
#include "suite_progress.h"
#include "suite_records.h"
#include "terminal.h"
#include "visible_gpus.h"

namespace ncclfi::cli {

namespace {

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

// Every scenario of the paths that --filter keeps, all loaded before anything runs. Prints each bad
// file's errors; nullopt when there was one.
std::optional<std::vector<Scenario>> load_suite_scenarios(const SuiteOptions& options) {
  std::vector<Scenario> scenarios;
  const ScenarioFilter filter = parse_scenario_filter(options.filter_tags);
  bool bad = false;
  for (const auto& file : expand_scenario_paths(options.paths)) {
    try {
      Scenario s = load_scenario(file, options.params);
      if (!filter_keeps(filter, s.name, s.tags)) continue;
      for (const auto& w : s.warnings) std::cerr << "warning: " << w << "\n";
      scenarios.push_back(std::move(s));
    } catch (const ScenarioError& e) {
      std::cerr << e.what() << "\n";
      bad = true;
    }
  }
  if (bad) return std::nullopt;
  return scenarios;
}

// What every run of the suite shares: where runs go, the count, MPS, the allow-list the ranks enforce,
// and the progress (none under --quiet).
ScenarioRunOptions suite_run_options(const SuiteOptions& options, const AllowList& allow_list, size_t total,
                                     SuiteProgress* progress) {
  ScenarioRunOptions run_options;
  run_options.out_root = options.out_root;
  run_options.install = Installation::discover();
  run_options.total = total;
  run_options.mps = options.mps;
  if (allow_list.configured) {
    std::string entries;
    for (const auto& p : allow_list.patterns) entries += (entries.empty() ? "" : ",") + p;
    run_options.allowed_hosts = entries;
  }
  if (progress != nullptr) {
    run_options.progress = [progress](const harness::ProgressState& st) { progress->update(st); };
  }
  return run_options;
}

harness::RunRecord skipped_record(const Scenario& s, const std::string& why) {
  harness::RunRecord skipped;
  skipped.scenario = s.name;
  skipped.summary = s.summary;
  skipped.tags = s.tags;
  skipped.expect = s.expectation;
  skipped.skipped = true;
  skipped.skip_reason = why;
  return skipped;
}

// Runs each scenario `repeat` times, a line per run, until done or interrupted. A scenario this host
// cannot run is reported skipped once, however many repeats were asked for.
void run_scenarios(const std::vector<Scenario>& scenarios, const SuiteOptions& options, int gpus,
                   ScenarioRunOptions& run_options, SuiteProgress* progress, SuiteRecords& records) {
  const size_t repeat = static_cast<size_t>(std::max(1, options.repeat));
  const size_t total = run_options.total;
  size_t index = 0;
  auto run_line = [&](const harness::RunRecord& r) {
    if (options.quiet) return;
    const size_t width = output_width(STDERR_FILENO);
    const std::string line = harness::format_run_line(r, index, total);
    std::cerr << (width > 0 ? harness::wrap(line, width - 1, 4, 0) : line + "\n");
  };
  for (size_t k = 0; k < scenarios.size() && !interrupted(); ++k) {
    const Scenario& s = scenarios[k];
    const GpuPlacement placement = place_on_gpus(s, gpus, options.gpu_sharing);
    const std::string why = !placement.skip.empty() ? placement.skip : unmet_requirement(s);
    if (!why.empty()) {
      index += repeat;
      harness::RunRecord skipped = skipped_record(s, why);
      run_line(skipped);
      records.add(std::move(skipped));
      for (size_t i = 0; progress != nullptr && i < repeat; ++i) progress->finish();
      continue;
    }
    run_options.gpu = placement;
    for (size_t round = 0; round < repeat && !interrupted(); ++round) {
      run_options.index = ++index;
      if (progress != nullptr)
        progress->start(
            {index - 1, k + 1, scenarios.size(), repeat > 1 ? round + 1 : 0, repeat > 1 ? repeat : 0});
      auto record = run_scenario(s, run_options);
      if (progress != nullptr) progress->finish();
      run_line(record);
      records.add(std::move(record));
    }
  }
}

// The runs of the suite as the progress's ETA sees them: each scenario's bound, `repeat` times; a
// scenario this host cannot run has none.
std::vector<SuiteProgress::Run> progress_runs(const std::vector<Scenario>& scenarios,
                                              const SuiteOptions& options, int gpus) {
  std::vector<SuiteProgress::Run> runs;
  for (const Scenario& s : scenarios) {
    const GpuPlacement placement = place_on_gpus(s, gpus, options.gpu_sharing);
    const bool skipped = !placement.skip.empty() || !unmet_requirement(s).empty();
    for (int i = 0; i < std::max(1, options.repeat); ++i)
      runs.push_back({s.name, skipped ? 0 : run_bound_s(s)});
  }
  return runs;
}

// The suite's report.html among the files written, "" when it is not one of them.
std::string html_report(const std::vector<std::string>& files) {
  for (const auto& file : files) {
    if (std::filesystem::path(file).filename() == "report.html") return file;
  }
  return "";
}

// The suite's reports, then summary.json (--json) or the final table on stdout. False when they could
// not be written.
bool write_suite_output(const harness::SuiteInfo& suite, const SuiteOptions& options, SuiteOutcome& outcome) {
  try {
    const auto files = harness::write_suite_reports(suite, outcome.records, options.reports);
    outcome.suite_dir = suite.out_dir;
    if (options.json) {
      std::cout << harness::summary_json(suite, outcome.records)
                       .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                << "\n";
    } else {
      const harness::ConsoleStyle style{use_color(STDOUT_FILENO), output_width(STDOUT_FILENO),
                                        html_report(files)};
      std::cout << harness::format_final_table(outcome.records, style);
      std::string line = "reports:";
      for (const auto& file : files) line += " " + file;
      std::cout << (style.width > 0 ? harness::wrap(line, style.width, 4, 0) : line + "\n");
    }
  } catch (const std::exception& e) {
    std::cerr << "ncclfi: cannot write the suite reports: " << e.what() << "\n";
    return false;
  }
  return true;
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
  const auto scenarios = load_suite_scenarios(options);
  if (!scenarios) {
    outcome.exit_status = kBadInput;
    return outcome;
  }
  if (scenarios->empty()) {
    std::cerr << "ncclfi: no scenario to run (check the paths and --filter)\n";
    outcome.exit_status = kBadInput;
    return outcome;
  }
  const AllowList allow_list = run_allow_list(options);
  const bool drill_ok = drill_checks_pass(*scenarios, options, allow_list);
  if (options.dry_run) {  // nothing is launched and no directory is made
    print_dry_run(*scenarios, options, allow_list);
    outcome.exit_status = drill_ok ? kAllPassed : kBadInput;
    return outcome;
  }
  if (!drill_ok) {
    outcome.exit_status = kBadInput;
    return outcome;
  }
  const int gpus = count_visible_gpus();
  harness::SuiteInfo suite;
  suite.start_ns = Clock::wall_ns();
  suite.out_dir = make_suite_dir(options.out_root);
  const size_t total = scenarios->size() * static_cast<size_t>(std::max(1, options.repeat));
  std::optional<SuiteProgress> progress;
  if (!options.quiet) {
    progress.emplace(
        std::cerr, isatty(STDERR_FILENO) != 0, [] { return output_width(STDERR_FILENO); },
        progress_runs(*scenarios, options, gpus), [] { return static_cast<double>(Clock::mono_ns()) / 1e9; });
  }
  SuiteProgress* shown = progress ? &*progress : nullptr;
  ScenarioRunOptions run_options = suite_run_options(options, allow_list, total, shown);
  {
    SuiteRecords records((std::filesystem::path(suite.out_dir) / ".runs.spool.jsonl").string(), total);
    run_scenarios(*scenarios, options, gpus, run_options, shown, records);
    outcome.records = records.take_all();
  }
  suite.end_ns = Clock::wall_ns();
  if (!write_suite_output(suite, options, outcome)) {
    outcome.exit_status = kHarnessError;
    return outcome;
  }
  outcome.exit_status = exit_status_for(outcome.records);
  if (interrupted() && outcome.exit_status != kHarnessError) outcome.exit_status = kHarnessError;
  return outcome;
}

}  // namespace ncclfi::cli
