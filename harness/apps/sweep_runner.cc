#include "sweep_runner.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "interrupt.h"
#include "ncclfi/bounded_input.h"
#include "reports.h"
#include "run_dir.h"
#include "scenario.h"
#include "scenario_params.h"
#include "scenario_runner.h"
#include "scenario_yaml.h"
#include "suite_runner.h"
#include "sweep.h"
#include "sweep_report.h"
#include "terminal.h"

namespace ncclfi::cli {
namespace fs = std::filesystem;
using nlohmann::json;

SweepAxis parse_sweep_axis(const std::string& text) {
  const auto eq = text.find('=');
  static const std::regex param_name("[A-Za-z_][A-Za-z0-9_]*");
  if (eq == std::string::npos || eq == 0 ||
      (text[0] != '/' && !std::regex_match(text.substr(0, eq), param_name))) {
    throw std::invalid_argument("--set " + text +
                                ": expected PARAM=v1,v2,... (a name the scenario declares in \"params\", "
                                "e.g. timeout_s=1,2,4) or JSON_POINTER=v1,v2,... (e.g. /deadline_s=10,20)");
  }
  SweepAxis axis;
  axis.pointer = text.substr(0, eq);
  std::string rest = text.substr(eq + 1);
  size_t start = 0;
  while (true) {
    const auto comma = rest.find(',', start);
    axis.values.push_back(rest.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  for (const auto& v : axis.values) {
    if (v.empty()) throw std::invalid_argument("--set " + text + ": empty value");
  }
  return axis;
}

json apply_sweep_value(const json& doc, const std::string& axis, const std::string& value) {
  // A name: the scenario's parameter of that name, whose default the value replaces.
  if (axis[0] != '/') {
    const auto names = declared_params(doc);
    if (std::find(names.begin(), names.end(), axis) == names.end()) {
      std::string known;
      for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
      throw std::invalid_argument("--set " + axis + ": the scenario declares no parameter " + axis +
                                  " (its \"params\": " + (known.empty() ? "none" : known) + ")");
    }
    return apply_sweep_value(doc, "/params/" + axis, value);
  }
  const std::string& pointer = axis;
  json patched = doc;
  const json::json_pointer ptr(pointer);
  if (!patched.contains(ptr.parent_pointer())) {
    throw std::invalid_argument("--set " + pointer + ": the scenario has nothing at " +
                                ptr.parent_pointer().to_string());
  }
  json parsed = value;
  const bool keep_string = patched.contains(ptr) && patched[ptr].is_string();
  if (!keep_string) {
    try {
      parsed = parse_json_input(value);
    } catch (const JsonInputError&) {  // not JSON (or 1e400, or too deep): the text itself
      parsed = value;
    }
  }
  patched[ptr] = parsed;
  return patched;
}

std::vector<std::vector<std::string>> sweep_combinations(const std::vector<SweepAxis>& axes) {
  std::vector<std::vector<std::string>> combos{{}};
  for (const auto& axis : axes) {
    std::vector<std::vector<std::string>> next;
    for (const auto& prefix : combos) {
      for (const auto& v : axis.values) {
        auto c = prefix;
        c.push_back(v);
        next.push_back(std::move(c));
      }
    }
    combos = std::move(next);
  }
  return combos;
}

namespace {

// Loads every combination of `path` (validated before anything runs).
std::vector<Scenario> patched_scenarios(const std::string& path, const std::vector<SweepAxis>& axes,
                                        const std::vector<std::vector<std::string>>& combos) {
  const json doc = read_scenario_json(path);
  std::vector<Scenario> out;
  for (const auto& combo : combos) {
    json patched = doc;
    for (size_t a = 0; a < axes.size(); ++a) patched = apply_sweep_value(patched, axes[a].pointer, combo[a]);
    std::string label;
    for (size_t a = 0; a < axes.size(); ++a) label += (a ? ", " : "") + axes[a].pointer + "=" + combo[a];
    out.push_back(scenario_from_json(patched, path + " [" + label + "]"));
  }
  return out;
}

// The sweep's points, every one loaded and validated before anything runs.
struct SweepPlan {
  std::vector<SweepAxis> axes;
  std::vector<std::vector<std::string>> combos;  // the values of each point, one per axis
  std::vector<Scenario> stalls, hangs;           // the scenario, and the hang scenario, at each point
};

// Throws ScenarioError or std::invalid_argument.
SweepPlan plan_sweep(const SweepOptions& options) {
  SweepPlan plan;
  for (const auto& s : options.sets) plan.axes.push_back(parse_sweep_axis(s));
  if (plan.axes.empty()) throw std::invalid_argument("sweep: give at least one --set JSON_POINTER=v1,v2,...");
  plan.combos = sweep_combinations(plan.axes);
  plan.stalls = patched_scenarios(options.scenario_path, plan.axes, plan.combos);
  if (!options.hang_scenario_path.empty())
    plan.hangs = patched_scenarios(options.hang_scenario_path, plan.axes, plan.combos);
  return plan;
}

struct SweepResults {
  std::vector<harness::SweepPoint> points, hang_points;  // the stall's and the hang's
  std::vector<harness::TimeoutTrial> trials;             // for the recommendation
  std::vector<harness::RunRecord> records;
};

// Runs every point, the stall scenario's then the hang scenario's, until done or interrupted.
SweepResults run_points(const SweepPlan& plan, const SweepOptions& options) {
  ScenarioRunOptions run_options;
  run_options.out_root = options.out_root;
  run_options.install = Installation::discover();
  run_options.total = plan.stalls.size() + plan.hangs.size();
  const bool tty = isatty(STDERR_FILENO) != 0 && !options.quiet;
  if (tty) {
    run_options.progress = [](const harness::ProgressState& st) {
      std::cerr << "\r\033[K" << harness::format_progress_line(st, output_width(STDERR_FILENO)) << std::flush;
    };
  }
  SweepResults results;
  auto run_one = [&](const Scenario& s, const std::vector<std::string>& combo, bool hang) {
    run_options.index = results.records.size() + 1;
    auto record = run_scenario(s, run_options);
    if (tty) std::cerr << "\r\033[K";
    harness::SweepPoint p{combo, record.judgement.outcome, record.judgement.detection_s,
                          record.judgement.mechanisms, harness::run_status(record)};
    (hang ? results.hang_points : results.points).push_back(p);
    try {
      results.trials.push_back(harness::make_timeout_trial(std::stod(combo[0]), hang, record.judgement));
    } catch (const std::exception&) {  // a first axis that is not a number: no recommendation
    }
    results.records.push_back(std::move(record));
  };
  for (size_t i = 0; i < plan.stalls.size() && !interrupted(); ++i)
    run_one(plan.stalls[i], plan.combos[i], false);
  for (size_t i = 0; i < plan.hangs.size() && !interrupted(); ++i)
    run_one(plan.hangs[i], plan.combos[i], true);
  return results;
}

// Writes sweep.json and the suite's reports, then prints: with --json sweep.json alone on stdout;
// otherwise the matrices and the recommendation as text.
int report_sweep(const SweepOptions& options, const SweepPlan& plan, const SweepResults& results) {
  harness::SweepAxes matrix_axes;
  for (const auto& a : plan.axes) {
    matrix_axes.pointers.push_back(a.pointer);
    matrix_axes.values.push_back(a.values);
  }
  std::ostringstream text;
  text << harness::render_sweep_matrix(matrix_axes, results.points);
  json out = {{"scenario", options.scenario_path},
              {"matrix", harness::sweep_json(matrix_axes, results.points)}};
  if (!plan.hangs.empty()) {
    text << "\nagainst a real hang (" << options.hang_scenario_path << "):\n"
         << harness::render_sweep_matrix(matrix_axes, results.hang_points);
    const auto rec = harness::recommend_timeout(results.trials);
    text << "\nrecommendation: " << rec.reason << "\n";
    out["hang_matrix"] = harness::sweep_json(matrix_axes, results.hang_points);
    out["recommendation"] = {
        {"timeout_s", rec.timeout_s ? json(*rec.timeout_s) : json(nullptr)},
        {"hang_detection_s", rec.hang_detection_s ? json(*rec.hang_detection_s) : json(nullptr)},
        {"reason", rec.reason}};
  }
  try {
    const fs::path dir = fs::absolute(fs::path(options.out_root) / "sweeps" / utc_stamp());
    fs::create_directories(dir);
    harness::write_file_atomic((dir / "sweep.json").string(), out.dump(2) + "\n");
    harness::SuiteInfo suite{"ncclfi-sweep", dir.string(), 0, 0};
    harness::write_suite_reports(suite, results.records);
    out["sweep_json"] = (dir / "sweep.json").string();
    if (options.json) {
      std::cout << out.dump(2) << "\n";
    } else {
      std::cout << text.str() << "sweep: " << (dir / "sweep.json").string() << "\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "ncclfi: cannot write the sweep report: " << e.what() << "\n";
    return kHarnessError;
  }
  return kAllPassed;
}

}  // namespace

int run_sweep(const SweepOptions& options) {
  SweepPlan plan;
  try {
    plan = plan_sweep(options);
  } catch (const ScenarioError& e) {
    std::cerr << e.what() << "\n";
    return kBadInput;
  } catch (const std::invalid_argument& e) {
    std::cerr << e.what() << "\n";
    return kBadInput;
  }
  const SweepResults results = run_points(plan, options);
  if (report_sweep(options, plan, results) == kHarnessError) return kHarnessError;
  if (interrupted()) return kHarnessError;
  // A sweep explores: points that miss the expectation are its findings, not a failure of the sweep.
  return exit_status_for(results.records) == kHarnessError ? kHarnessError : kAllPassed;
}

}  // namespace ncclfi::cli
