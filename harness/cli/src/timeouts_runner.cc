#include "timeouts_runner.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "interrupt.h"
#include "ncclfi/event_log.h"
#include "rank_launcher.h"
#include "run_dir.h"
#include "scenario.h"
#include "scenario_runner.h"
#include "suite_runner.h"
#include "timeouts_matrix.h"

namespace ncclfi::cli {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// How long after its detection a PyTorch job may take to end by itself: the watchdog's default wait for
// the debug dump is a minute (TORCH_NCCL_WAIT_TIMEOUT_DUMP_MILSEC), then the teardown.
constexpr double kTeardownRoomS = 75;

json read_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument(path + ": cannot be opened");
  try {
    return json::parse(in);
  } catch (const json::parse_error& e) {
    throw std::invalid_argument(path + ": not valid JSON (byte " + std::to_string(e.byte) + ")");
  }
}

// A parameter value as the command line would give it (list items quoted for split_words).
std::string override_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (!v.is_array()) return v.dump();
  std::string out;
  for (const auto& item : v) {
    std::string word = item.is_string() ? item.get<std::string>() : item.dump();
    std::string quoted = "'";
    for (const char c : word) quoted += c == '\'' ? std::string("'\"'\"'") : std::string(1, c);
    out += (out.empty() ? "" : " ") + quoted + "'";
  }
  return out;
}

// One cell's scenario: the healthy job with a setting's parameters, environment and restarts, one
// fault of the menu, and an expectation that needs no baseline (the matrix reads the run, not the
// verdict).
struct Variant {
  Scenario scenario;
  std::string setting;
  std::optional<MatrixFault> fault;  // nullopt: a healthy trial
};

Variant make_variant(const json& written, const std::string& file, const ParamOverrides& user_params,
                     const TimeoutSetting* setting, std::optional<MatrixFault> fault,
                     const FaultPlacement& at, double deadline_s) {
  json doc = written;
  ParamOverrides params = user_params;
  std::string name = doc.value("name", std::string("job"));
  if (setting != nullptr) {
    for (const auto& [k, v] : setting->params) params[k] = override_text(v);
    for (const auto& [k, v] : setting->env) doc["env"][k] = v;
    if (setting->max_restarts) doc["launcher"]["max_restarts"] = *setting->max_restarts;
    name += "." + setting->name;
  }
  if (fault) {
    doc["faults"] = matrix_fault_json(*fault, at);
    doc["expect"] = {{"outcome", is_survivable(*fault) ? "clean" : "detected"}, {"fault_may_not_fire", true}};
    name += std::string(".") + to_string(*fault);
  } else {
    doc["faults"] = json::array();
    doc["expect"] = {{"outcome", "clean"}};
    name += ".healthy";
  }
  doc["baseline"] = false;
  doc["name"] = name;
  if (deadline_s > 0) doc["deadline_s"] = deadline_s;
  Variant v{scenario_from_json(doc, file, params), setting ? setting->name : "", fault};
  // The healthy job's collectives are timed by the preload (the longest one bounds the timeout too).
  if (!fault) v.scenario.time_ops = true;
  return v;
}

}  // namespace

std::string default_timeout_settings_path() {
  return Installation::discover().data_dir + "/workloads/torch/timeout-settings.json";
}

int run_timeouts(const TimeoutsOptions& o) {
  const int64_t started = Clock::mono_ns();
  // ---- everything validated before the first launch
  json written;
  Scenario base;
  std::vector<TimeoutSetting> settings;
  std::vector<MatrixFault> faults;
  try {
    written = read_json_file(o.scenario_path);
    base = load_scenario(o.scenario_path, o.params);
    if (!base.plan.faults.empty())
      throw std::invalid_argument(o.scenario_path +
                                  ": /faults: expected none (the healthy job; ncclfi timeouts adds "
                                  "each fault itself), got " +
                                  std::to_string(base.plan.faults.size()));
    const std::string settings_path =
        o.settings_path.empty() ? default_timeout_settings_path() : o.settings_path;
    settings = parse_timeout_settings(read_json_file(settings_path), settings_path);
    for (const auto& name : o.faults) {
      const auto f = matrix_fault_from_string(name);
      if (!f)
        throw std::invalid_argument("--fault " + name +
                                    ": expected stall, gpu_hang, host_hang, dead_rank or net_error");
      faults.push_back(*f);
    }
    if (faults.empty()) faults = all_matrix_faults();
    if (o.trials < 1 || o.trials > 100) throw std::invalid_argument("--trials: expected 1 to 100");
    if (o.rank >= base.workload.ranks)
      throw std::invalid_argument("--rank " + std::to_string(o.rank) + ": the job has " +
                                  std::to_string(base.workload.ranks) + " rank(s)");
    // Every cell's scenario loads (a setting naming a parameter the job lacks fails here, not mid-run).
    FaultPlacement probe;
    probe.rank = o.rank >= 0 ? o.rank : base.workload.ranks - 1;
    for (const auto& s : settings) {
      for (const auto f : faults)
        (void)make_variant(written, o.scenario_path, o.params, &s, f, probe, o.deadline_s);
    }
  } catch (const ScenarioError& e) {
    std::cerr << e.what() << "\n";
    return kBadInput;
  } catch (const std::invalid_argument& e) {
    std::cerr << "ncclfi timeouts: " << e.what() << "\n";
    return kBadInput;
  }
  const GpuPlacement placement = place_on_gpus(base, count_visible_gpus(), o.gpu_sharing);
  const std::string cannot = !placement.skip.empty() ? placement.skip : unmet_requirement(base);
  if (!cannot.empty()) {
    std::cerr << "ncclfi timeouts: " << base.name << " cannot run on this host: " << cannot << "\n";
    return kBadInput;
  }

  MatrixReport report;
  report.scenario = base.name;
  report.trials = o.trials;
  report.settings = settings;
  report.faults = faults;
  const fs::path out = fs::absolute(fs::path(o.out_root) / "timeouts" / utc_stamp());
  fs::create_directories(out);
  report.out_dir = out.string();
  ScenarioRunOptions run;
  run.out_root = out.string();
  run.install = Installation::discover();
  run.gpu = placement;
  run.mps = o.mps;
  const int healthy_trials = o.healthy_trials > 0 ? o.healthy_trials : o.trials;
  const size_t total =
      static_cast<size_t>(healthy_trials) + settings.size() * faults.size() * static_cast<size_t>(o.trials);
  size_t index = 0;
  bool harness_error = false;
  bool cut = false;  // a run was interrupted
  auto note = [&](const std::string& line) {
    if (!o.quiet) std::cerr << "[" << index << "/" << total << "] " << line << "\n";
  };

  // ---- the healthy job
  std::vector<harness::RunRecord> healthy;
  const Variant healthy_variant =
      make_variant(written, o.scenario_path, o.params, nullptr, std::nullopt, {}, o.deadline_s);
  for (int t = 0; t < healthy_trials && !interrupted(); ++t) {
    ++index;
    run.index = index;
    run.total = total;
    healthy.push_back(run_scenario(healthy_variant.scenario, run));
    const auto& r = healthy.back();
    report.gpu = r.gpu;
    harness_error = harness_error || !r.harness_error.empty();
    note("healthy trial " + std::to_string(t + 1) + ": " +
         std::string(harness::to_string(r.judgement.outcome)) +
         (r.harness_error.empty() ? "" : " (harness error: " + r.harness_error + ")") + "  " + r.run_dir);
  }
  report.healthy = profile_healthy(healthy);
  report.recommendation = recommend_timeout(report.healthy, o.margin);

  // ---- where and when the faults strike, from what the healthy job showed
  FaultPlacement at;
  at.rank = o.rank >= 0 ? o.rank : base.workload.ranks - 1;
  at.after_calls = o.after_calls;
  const double step = report.healthy.median_step_s.value_or(0.5);
  at.after_ms = std::round((report.healthy.startup_s.value_or(10.0) + 5 * step) * 1000);  // a few steps in
  at.stall_s = o.stall_s > 0 ? o.stall_s : std::max(1.0, 2 * report.healthy.largest_step_s.value_or(0.5));
  report.stall_s = at.stall_s;

  // ---- the matrix
  for (const auto& s : settings) {
    for (const auto f : faults) {
      if (interrupted()) break;
      Cell cell{s.name, f, {}};
      const Variant v = make_variant(written, o.scenario_path, o.params, &s, f, at, o.deadline_s);
      for (int t = 0; t < o.trials && !interrupted(); ++t) {
        ++index;
        run.index = index;
        const harness::RunRecord r = run_scenario(v.scenario, run);
        harness_error = harness_error || (!r.harness_error.empty() && !r.history.interrupted);
        cut = cut || r.history.interrupted;
        cell.trials.push_back(read_trial(r, f));
        note(s.name + " x " + to_string(f) + " trial " + std::to_string(t + 1) + ": " +
             Cell{s.name, f, {cell.trials.back()}}.text() + "  " + r.run_dir);
      }
      report.cells.push_back(std::move(cell));
      // After every cell: a long matrix that is stopped (deadline of a CI job, Ctrl-C) keeps what it has.
      report.findings = matrix_findings(settings, report.cells, report.recommendation);
      try {
        harness::write_file_atomic((out / "timeouts.json").string(), to_json(report).dump(2) + "\n");
      } catch (const std::exception&) {
        // reported below, when the final files are written
      }
    }
  }
  if (cut || index < total) {
    report.interrupted = "interrupted: " + std::to_string(index) + " of " + std::to_string(total) +
                         " runs started, the last one cut short";
  }
  report.findings = matrix_findings(settings, report.cells, report.recommendation);
  // A job still running at the deadline may only have been slow to end: PyTorch waits for its debug
  // dump (a minute by default) before it tears a process down. Say so when the deadline left less.
  const double trial_deadline = o.deadline_s > 0 ? o.deadline_s : base.deadline_s;
  double longest_timeout = 0;
  for (const auto& st : settings) longest_timeout = std::max(longest_timeout, st.timeout_s.value_or(0.0));
  const double after_detection = trial_deadline - report.healthy.startup_s.value_or(0.0) - longest_timeout;
  const bool left = std::any_of(report.cells.begin(), report.cells.end(),
                                [](const Cell& c) { return c.left_running() > 0; });
  if (left && after_detection < kTeardownRoomS) {
    char text[320];
    std::snprintf(
        text, sizeof text,
        "the trial deadline (%.0f s) left about %.0f s after the expected detection (startup %.1f s + "
        "timeout %.0f s): a job 'still running at the deadline' may only have been slow to end; rerun "
        "with --deadline-s %.0f or more",
        trial_deadline, std::max(0.0, after_detection), report.healthy.startup_s.value_or(0.0),
        longest_timeout, std::ceil(trial_deadline - after_detection + kTeardownRoomS));
    report.findings.push_back(text);
  }
  if (report.healthy.clean < report.healthy.trials) {
    report.findings.insert(report.findings.begin(), "the healthy job was clean in only " +
                                                        std::to_string(report.healthy.clean) + "/" +
                                                        std::to_string(report.healthy.trials) +
                                                        " trials: fix it before trusting the matrix");
  }
  report.wall_s = static_cast<double>(Clock::mono_ns() - started) / 1e9;

  const std::string text = matrix_text(report);
  std::cout << text;
  try {
    harness::write_file_atomic((out / "timeouts.json").string(), to_json(report).dump(2) + "\n");
    harness::write_file_atomic((out / "timeouts.html").string(), matrix_html(report));
    harness::write_file_atomic((out / "timeouts.txt").string(), text);
    if (!o.json_path.empty()) harness::write_file_atomic(o.json_path, to_json(report).dump(2) + "\n");
    if (!o.html_path.empty()) harness::write_file_atomic(o.html_path, matrix_html(report));
  } catch (const std::exception& e) {
    std::cerr << "ncclfi timeouts: cannot write the matrix: " << e.what() << "\n";
    return kHarnessError;
  }
  char wall[32];
  std::snprintf(wall, sizeof wall, "%.0f", report.wall_s);
  std::cout << "matrix: " << (out / "timeouts.json").string() << " " << (out / "timeouts.html").string()
            << " (" << wall << " s)\n";
  if (interrupted() || harness_error) return kHarnessError;
  return report.findings.empty() ? kAllPassed : kSomeFailed;
}

}  // namespace ncclfi::cli
