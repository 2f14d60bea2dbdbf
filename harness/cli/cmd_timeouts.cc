// `ncclfi timeouts`: validate a job's timeout and watchdog settings against a matrix of faults.
#include <iostream>

#include "commands.h"
#include "timeouts_matrix.h"
#include "timeouts_runner.h"

namespace ncclfi::cli {

void add_timeouts_command(CLI::App& app, int& status) {
  auto o = std::make_shared<TimeoutsOptions>();
  auto params = std::make_shared<std::vector<std::string>>();
  auto* cmd = app.add_subcommand(
      "timeouts",
      "Measure your healthy job, then run it under each setting (timeouts, TORCH_NCCL_* modes, restarts) "
      "against "
      "a stall, a GPU-side hang, a host-side hang, a dead rank, a network error, a dead NIC, a silent peer "
      "and "
      "a peer silent at connection setup; print the matrix, the settings that never detect a hang and a "
      "recommended timeout and NCCL_IB_TIMEOUT.");
  cmd->add_option("scenario", o->scenario_path, "the healthy job's scenario (no faults; it must run clean)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--param", *params, "NAME=VALUE for the scenario's {param:NAME} placeholders; repeatable");
  cmd->add_option("--settings", o->settings_path,
                  "the settings under test (JSON: {\"settings\": [{name, summary, params, env, max_restarts, "
                  "timeout_s}]}); default: share/ncclfi/workloads/torch/timeout-settings.json");
  cmd->add_option("--fault", o->faults,
                  "stall, gpu_hang, host_hang, dead_rank, net_error, nic_down, silent_peer, connect_silent "
                  "(default: all); repeatable");
  cmd->add_option("--trials", o->trials, "trials per cell")->capture_default_str()->check(CLI::Range(1, 100));
  cmd->add_option("--healthy-trials", o->healthy_trials, "healthy runs to measure (default: --trials)")
      ->check(CLI::Range(1, 100));
  cmd->add_option("--stall-s", o->stall_s,
                  "the survivable stall's length (default: 2 x the largest healthy step)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--margin", o->margin,
                  "recommended timeout = MARGIN x the largest healthy step; NCCL_IB_TIMEOUT's retry budget "
                  "must exceed it too")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 100.0));
  cmd->add_option("--rank", o->rank, "the rank the faults hit (default: the last)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--after-calls", o->after_calls,
                  "api faults fire at this all_reduce of that rank, net faults at this send or receive on "
                  "the net shim")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--deadline-s", o->deadline_s, "each trial's deadline (default: the scenario's deadline_s)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--out", o->out_root, "root of the run directories (<out>/timeouts/<UTC time>/)")
      ->capture_default_str();
  cmd->add_option("--json", o->json_path, "also write a copy of timeouts.json here");
  cmd->add_option("--html", o->html_path, "also write a copy of timeouts.html here");
  cmd->add_flag("--quiet,-q", o->quiet, "no line per trial");
  add_gpu_options(*cmd, o->gpu_sharing, o->mps);
  describe_values(*cmd, {{"scenario", ValueKind::kScenario, "SCENARIO"},
                         {"--param", ValueKind::kText, "NAME=VALUE"},
                         {"--settings", ValueKind::kFile, "FILE"},
                         {"--trials", ValueKind::kText, "N"},
                         {"--healthy-trials", ValueKind::kText, "N"},
                         {"--stall-s", ValueKind::kText, "S"},
                         {"--margin", ValueKind::kText, "X"},
                         {"--rank", ValueKind::kText, "R"},
                         {"--after-calls", ValueKind::kText, "N"},
                         {"--deadline-s", ValueKind::kText, "S"},
                         {"--out", ValueKind::kDirectory, "DIR"},
                         {"--json", ValueKind::kFile, "FILE"},
                         {"--html", ValueKind::kFile, "FILE"}});
  std::vector<std::string> fault_names;
  for (const auto f : all_matrix_faults()) fault_names.emplace_back(to_string(f));
  register_choices(cmd->get_option("--fault"), fault_names, "FAULT");
  cmd->footer(
      "Exit status: 0 matrix complete and no finding, 1 findings (a setting that never detects a hang, a "
      "false\n"
      "alarm, a fault that did not fire, a timeout or NCCL_IB_TIMEOUT under the recommendation, a healthy "
      "job\n"
      "that was not clean), 2 bad input, 3 harness error or interrupted.\n"
      "Examples:\n"
      "  ncclfi timeouts share/ncclfi/scenarios/templates/torch-job.json --param script=train.py \\\n"
      "      --param script_args='--epochs 1 --timeout {param:pg_timeout_s}' --trials 3\n"
      "  ncclfi timeouts my-job.json --settings my-settings.json --fault gpu_hang --fault stall --stall-s 8");
  cmd->callback([o, params, &status] {
    try {
      for (const auto& p : *params) o->params.insert(parse_param_assignment(p));
    } catch (const std::invalid_argument& e) {
      std::cerr << "ncclfi timeouts: --param: " << e.what() << "\n";
      status = 2;
      return;
    }
    status = run_timeouts(*o);
  });
}

}  // namespace ncclfi::cli
