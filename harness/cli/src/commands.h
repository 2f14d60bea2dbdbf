// The subcommands of ncclfi, each registered on the CLI11 app with its options, help and examples.
#pragma once

#include <CLI/CLI.hpp>

namespace ncclfi::cli {

// Each returns the exit status through `status` when the subcommand ran.
void add_run_command(CLI::App& app, int& status);
void add_validate_command(CLI::App& app, int& status);
void add_list_command(CLI::App& app, int& status);
void add_report_command(CLI::App& app, int& status);
void add_control_commands(CLI::App& app, int& status);  // arm, disarm and abort
void add_abort_command(CLI::App& app, int& status);
void add_sweep_command(CLI::App& app, int& status);
void add_timeouts_command(CLI::App& app, int& status);
void add_agent_command(CLI::App& app, int& status);
void add_lab_command(CLI::App& app, int& status);

enum class GpuSharing;
// --gpu-sharing and --mps, shared by run, sweep and timeouts.
void add_gpu_options(CLI::App& cmd, GpuSharing& sharing, bool& mps);

// Hidden: `help-man` (the man page) and `completion bash`, generated from `app` at build time.
void add_generator_commands(CLI::App& app, int& status);

}  // namespace ncclfi::cli
