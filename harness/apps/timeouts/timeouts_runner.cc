#include "timeouts_runner.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include "host_env.h"
#include "interrupt.h"
#include "launch_context.h"
#include "launcher_spec.h"
#include "ncclfi/bounded_input.h"
#include "ncclfi/event_log.h"
#include "run_dir.h"
#include "scenario.h"
#include "scenario_runner.h"
#include "suite_runner.h"
#include "timeouts_matrix.h"
#include "timeouts_report.h"
#include "visible_gpus.h"

namespace ncclfi::cli {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// How long after its detection a PyTorch job may take to end by itself: the watchdog's default wait for
// the debug dump is a minute (TORCH_NCCL_WAIT_TIMEOUT_DUMP_MILSEC), then the teardown.
constexpr double kTeardownRoomS = 75;

// The scenario and the settings file, read as scenarios are: a regular file of at most 16 MiB, never
// waiting on a FIFO or a device, parsed with the depth and duplicate-key limits of every JSON input.
json read_json_file(const std::string& path) {
  std::string text;
  if (std::string problem = read_regular_file(path, kMaxInputFileBytes, text); !problem.empty())
    throw std::invalid_argument(path + ": " + problem);
  try {
    return parse_json_input(text);
  } catch (const JsonInputError& e) {
    throw std::invalid_argument(path + ": not valid JSON: " + e.what());
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
  // nic_down is the IB transport's failure: in the shim's IB persona the dead NIC's peers wait out their
  // own retry budget and fail with NCCL's completion lines, as on InfiniBand (in the plain persona they
  // would fail at once).
  if (fault == MatrixFault::kNicDown) v.scenario.ib_persona = true;
  return v;
}

// What the command was given, read and checked before the first launch.
struct TimeoutsInput {
  json written;  // the scenario file as written: each cell's scenario is made from it
  Scenario base;
  std::vector<TimeoutSetting> settings;
  std::vector<MatrixFault> faults;
};

std::vector<MatrixFault> faults_of(const TimeoutsOptions& o) {
  std::vector<MatrixFault> faults;
  for (const auto& name : o.faults) {
    const auto f = matrix_fault_from_string(name);
    if (!f) throw std::invalid_argument("--fault " + name + ": expected " + matrix_fault_names());
    faults.push_back(*f);
  }
  if (faults.empty()) faults = all_matrix_faults();
  return faults;
}

// Throws ScenarioError or std::invalid_argument.
TimeoutsInput load_timeouts_input(const TimeoutsOptions& o) {
  TimeoutsInput in;
  in.written = read_json_file(o.scenario_path);
  in.base = load_scenario(o.scenario_path, o.params);
  if (!in.base.plan.faults.empty())
    throw std::invalid_argument(o.scenario_path +
                                ": /faults: expected none (the healthy job; ncclfi timeouts adds "
                                "each fault itself), got " +
                                std::to_string(in.base.plan.faults.size()));
  const std::string settings_path =
      o.settings_path.empty() ? default_timeout_settings_path() : o.settings_path;
  in.settings = parse_timeout_settings(read_json_file(settings_path), settings_path);
  in.faults = faults_of(o);
  if (o.trials < 1 || o.trials > 100) throw std::invalid_argument("--trials: expected 1 to 100");
  if (o.rank >= in.base.workload.ranks)
    throw std::invalid_argument("--rank " + std::to_string(o.rank) + ": the job has " +
                                std::to_string(in.base.workload.ranks) + " rank(s)");
  // Every cell's scenario loads (a setting naming a parameter the job lacks fails here, not mid-run).
  FaultPlacement probe;
  probe.rank = o.rank >= 0 ? o.rank : in.base.workload.ranks - 1;
  for (const auto& s : in.settings) {
    for (const auto f : in.faults)
      (void)make_variant(in.written, o.scenario_path, o.params, &s, f, probe, o.deadline_s);
  }
  return in;
}

// A job still running at the deadline may only have been slow to end: PyTorch waits for its debug
// dump (a minute by default) before it tears a process down. Says so when the deadline left less.
std::optional<std::string> short_deadline_finding(const TimeoutsOptions& o, const TimeoutsInput& in,
                                                  const MatrixReport& report) {
  const double trial_deadline = o.deadline_s > 0 ? o.deadline_s : in.base.deadline_s;
  double longest_timeout = 0;
  for (const auto& st : in.settings) longest_timeout = std::max(longest_timeout, st.timeout_s.value_or(0.0));
  const double after_detection = trial_deadline - report.healthy.startup_s.value_or(0.0) - longest_timeout;
  const bool left = std::any_of(report.cells.begin(), report.cells.end(),
                                [](const Cell& c) { return c.left_running() > 0; });
  if (!(left && after_detection < kTeardownRoomS)) return std::nullopt;
  char text[320];
  std::snprintf(
      text, sizeof text,
      "the trial deadline (%.0f s) left about %.0f s after the expected detection (startup %.1f s + "
      "timeout %.0f s): a job 'still running at the deadline' may only have been slow to end; rerun "
      "with --deadline-s %.0f or more",
      trial_deadline, std::max(0.0, after_detection), report.healthy.startup_s.value_or(0.0), longest_timeout,
      std::ceil(trial_deadline - after_detection + kTeardownRoomS));
  return std::string(text);
}

// One run of the matrix: the healthy trials, then every cell's, numbered in one count; the report
// they fill, written after every cell and at the end.
class MatrixRun {
 public:
  MatrixRun(const TimeoutsOptions& o, const TimeoutsInput& in, const GpuPlacement& placement)
      : o_(o), in_(in), healthy_trials_(o.healthy_trials > 0 ? o.healthy_trials : o.trials) {
    report_.scenario = in.base.name;
    report_.trials = o.trials;
    report_.settings = in.settings;
    report_.faults = in.faults;
    out_ = fs::absolute(fs::path(o.out_root) / "timeouts" / utc_stamp());
    fs::create_directories(out_);
    report_.out_dir = out_.string();
    run_.out_root = out_.string();
    run_.install = Installation::discover();
    run_.gpu = placement;
    run_.mps = o.mps;
    const auto runnable = static_cast<size_t>(std::count_if(
        in.faults.begin(), in.faults.end(), [this](MatrixFault f) { return skip_reason(f).empty(); }));
    total_ =
        static_cast<size_t>(healthy_trials_) + in.settings.size() * runnable * static_cast<size_t>(o.trials);
  }

  // The healthy job: its profile and the recommended timeout.
  void run_healthy() {
    std::vector<harness::RunRecord> healthy;
    const Variant variant =
        make_variant(in_.written, o_.scenario_path, o_.params, nullptr, std::nullopt, {}, o_.deadline_s);
    for (int t = 0; t < healthy_trials_ && !interrupted(); ++t) {
      ++index_;
      run_.index = index_;
      run_.total = total_;
      healthy.push_back(run_scenario(variant.scenario, run_));
      const auto& r = healthy.back();
      report_.gpu = r.gpu;
      harness_error_ = harness_error_ || !r.harness_error.empty();
      for (const auto& n : r.judgement.notes) {
        if (std::find(report_.notes.begin(), report_.notes.end(), n) == report_.notes.end())
          report_.notes.push_back(n);
      }
      note("healthy trial " + std::to_string(t + 1) + ": " +
           std::string(harness::to_string(r.judgement.outcome)) +
           (r.harness_error.empty() ? "" : " (harness error: " + r.harness_error + ")") + "  " + r.run_dir);
    }
    report_.healthy = profile_healthy(healthy);
    report_.recommendation = recommend_timeout(report_.healthy, o_.margin);
  }

  // Where and when the faults strike, from what the healthy job showed.
  FaultPlacement fault_placement() {
    FaultPlacement at;
    at.rank = o_.rank >= 0 ? o_.rank : in_.base.workload.ranks - 1;
    at.after_calls = o_.after_calls;
    const double step = report_.healthy.median_step_s.value_or(0.5);
    // A few steps in, counted from the fastest healthy start: healthy trials slowed by a loaded host would
    // put the moment after a faster faulted trial had ended.
    const double startup = report_.healthy.fastest_startup_s.value_or(10.0);
    at.after_ms = std::round((startup + 5 * step) * 1000);
    at.stall_s =
        o_.stall_s > 0 ? o_.stall_s : std::max(1.0, 2 * report_.healthy.largest_step_s.value_or(0.5));
    report_.stall_s = at.stall_s;
    return at;
  }

  void run_cells(const FaultPlacement& at) {
    for (const auto& s : in_.settings) {
      for (const auto f : in_.faults) {
        if (interrupted()) break;
        run_cell(s, f, at);
        // After every cell: a long matrix that is stopped (deadline of a CI job, Ctrl-C) keeps what it has.
        report_.findings = matrix_findings(in_.settings, report_.cells, report_.recommendation);
        try {
          harness::write_file_atomic((out_ / "timeouts.json").string(), to_json(report_).dump(2) + "\n");
        } catch (const std::exception&) {
          // reported below, when the final files are written
        }
      }
    }
  }

  // The findings over the whole matrix, what stopped it early, and its wall time.
  void close_report(int64_t started) {
    if (cut_ || index_ < total_) {
      report_.interrupted = "interrupted: " + std::to_string(index_) + " of " + std::to_string(total_) +
                            " runs started, the last one cut short";
    }
    report_.findings = matrix_findings(in_.settings, report_.cells, report_.recommendation);
    if (auto finding = short_deadline_finding(o_, in_, report_)) report_.findings.push_back(*finding);
    if (report_.healthy.clean < report_.healthy.trials) {
      report_.findings.insert(report_.findings.begin(), "the healthy job was clean in only " +
                                                            std::to_string(report_.healthy.clean) + "/" +
                                                            std::to_string(report_.healthy.trials) +
                                                            " trials: fix it before trusting the matrix");
    }
    report_.wall_s = static_cast<double>(Clock::mono_ns() - started) / 1e9;
  }

  // Prints the matrix, writes its files; returns the exit status.
  int write_and_print() const {
    const std::string text = matrix_text(report_);
    std::cout << text;
    try {
      harness::write_file_atomic((out_ / "timeouts.json").string(), to_json(report_).dump(2) + "\n");
      harness::write_file_atomic((out_ / "timeouts.html").string(), matrix_html(report_));
      harness::write_file_atomic((out_ / "timeouts.txt").string(), text);
      if (!o_.json_path.empty()) harness::write_file_atomic(o_.json_path, to_json(report_).dump(2) + "\n");
      // The copy's links to the trials start from where it is written.
      if (!o_.html_path.empty())
        harness::write_file_atomic(o_.html_path,
                                   matrix_html(report_, fs::absolute(o_.html_path).parent_path().string()));
    } catch (const std::exception& e) {
      std::cerr << "ncclfi timeouts: cannot write the matrix: " << e.what() << "\n";
      return kHarnessError;
    }
    char wall[32];
    std::snprintf(wall, sizeof wall, "%.0f", report_.wall_s);
    std::cout << "matrix: " << (out_ / "timeouts.json").string() << " " << (out_ / "timeouts.html").string()
              << " (" << wall << " s)\n";
    if (interrupted() || harness_error_) return kHarnessError;
    return report_.findings.empty() ? kAllPassed : kSomeFailed;
  }

 private:
  void note(const std::string& line) const {
    if (!o_.quiet) std::cerr << "[" << index_ << "/" << total_ << "] " << line << "\n";
  }

  // Why `f` cannot strike this job; empty when it can. A net fault needs the job's traffic on the net
  // shim (the cpu-ring workload, or a scenario with the net layer): elsewhere NCCL's own transport
  // carries it and the fault could never fire, so the cell is skipped rather than judged.
  std::string skip_reason(MatrixFault f) const {
    if (needs_net_shim(f) && !in_.base.layer_net)
      return "a net fault, and this job does not load the net shim (add \"net\" to its \"layers\")";
    return "";
  }

  // One setting against one fault, `trials` times.
  void run_cell(const TimeoutSetting& s, MatrixFault f, const FaultPlacement& at) {
    Cell cell{s.name, f, {}};
    if (cell.skipped = skip_reason(f); !cell.skipped.empty()) {
      note(s.name + " x " + to_string(f) + ": " + cell.text());
      report_.cells.push_back(std::move(cell));
      return;
    }
    const Variant v = make_variant(in_.written, o_.scenario_path, o_.params, &s, f, at, o_.deadline_s);
    bool may_rerun = true;
    for (int t = 0; t < o_.trials && !interrupted(); ++t) {
      TrialResult trial = run_trial(v.scenario, f);
      note(s.name + " x " + to_string(f) + " trial " + std::to_string(t + 1) + ": " +
           Cell{s.name, f, {trial}}.text() + "  " + trial.run_dir);
      // A trial whose fault never fired says nothing about the setting: run it again, at most twice. A
      // fault that never fires in three runs will not (its target is not in this job): the cell keeps
      // that trial, and its later trials are not run again.
      for (int again = 0; may_rerun && again < kNeverFiredReruns && never_fired(trial) && !interrupted();
           ++again) {
        ++cell.reruns;
        ++total_;
        trial = run_trial(v.scenario, f);
        note(s.name + " x " + to_string(f) + " trial " + std::to_string(t + 1) +
             ", run again: " + Cell{s.name, f, {trial}}.text() + "  " + trial.run_dir);
      }
      may_rerun = may_rerun && !never_fired(trial);
      cell.trials.push_back(std::move(trial));
    }
    report_.cells.push_back(std::move(cell));
  }

  static constexpr int kNeverFiredReruns = 2;
  static bool never_fired(const TrialResult& t) { return !t.fired && t.error.empty(); }

  TrialResult run_trial(const Scenario& scenario, MatrixFault f) {
    ++index_;
    run_.index = index_;
    const harness::RunRecord r = run_scenario(scenario, run_);
    harness_error_ = harness_error_ || (!r.harness_error.empty() && !r.history.interrupted);
    cut_ = cut_ || r.history.interrupted;
    return read_trial(r, f);
  }

  const TimeoutsOptions& o_;
  const TimeoutsInput& in_;
  const int healthy_trials_;
  MatrixReport report_;
  fs::path out_;
  ScenarioRunOptions run_;
  size_t total_ = 0;
  size_t index_ = 0;
  bool harness_error_ = false;
  bool cut_ = false;  // a run was interrupted
};

}  // namespace

std::string default_timeout_settings_path() {
  return Installation::discover().data_dir + "/workloads/torch/timeout-settings.json";
}

int run_timeouts(const TimeoutsOptions& o) {
  const int64_t started = Clock::mono_ns();
  TimeoutsInput in;  // everything validated before the first launch
  try {
    in = load_timeouts_input(o);
  } catch (const ScenarioError& e) {
    std::cerr << e.what() << "\n";
    return kBadInput;
  } catch (const std::invalid_argument& e) {
    std::cerr << "ncclfi timeouts: " << e.what() << "\n";
    return kBadInput;
  }
  const GpuPlacement placement = place_on_gpus(in.base, count_visible_gpus(), o.gpu_sharing);
  const std::string cannot = !placement.skip.empty() ? placement.skip : unmet_requirement(in.base);
  if (!cannot.empty()) {
    std::cerr << "ncclfi timeouts: " << in.base.name << " cannot run on this host: " << cannot << "\n";
    return kBadInput;
  }
  MatrixRun matrix(o, in, placement);
  matrix.run_healthy();
  matrix.run_cells(matrix.fault_placement());
  matrix.close_report(started);
  return matrix.write_and_print();
}

}  // namespace ncclfi::cli
