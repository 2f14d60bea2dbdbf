// The subcommands of ncclfi, each registered on the CLI11 app with its options, help and examples.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli_model.h"
#include "report_spec.h"

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
void add_diagnose_command(CLI::App& app, int& status);
void add_score_command(CLI::App& app, int& status);

enum class GpuSharing;
// --gpu-sharing and --mps, shared by run, sweep and timeouts.
void add_gpu_options(CLI::App& cmd, GpuSharing& sharing, bool& mps);

// --report NAME[=PATH] (repeatable) and --NAME PATH for every report format (report_spec.h), shared by
// run and report: each adds its text to `texts` as NAME=PATH; parse them with report_requests().
void add_report_options(CLI::App& cmd, std::vector<std::string>& texts);
// The requests of `texts`; throws std::invalid_argument naming the formats there are.
std::vector<harness::ReportRequest> report_requests(const std::vector<std::string>& texts);

// Hidden: `help-man` (the man page) and `completion bash|zsh|fish`, generated from `app` at build time.
void add_generator_commands(CLI::App& app, int& status);
// `ncclfi __complete WORD...` (what the completion scripts ask at each <TAB>): prints what may come at
// the last of `words`; returns the exit status. Handled before parsing, as its words are half typed.
int print_completions(const CLI::App& app, const std::vector<std::string>& words);

}  // namespace ncclfi::cli
