// ncclfi: fault-injection and resilience tests for NCCL jobs. Exit status (the same for every command,
// docs/exit-codes.md): 0 every verdict passed, 1 some failed (or unknown), 2 bad input, 3 harness error
// or interrupted.
#include <iostream>

#include "build_info.h"
#include "cli_help.h"
#include "cli_suggest.h"
#include "commands.h"
#include "interrupt.h"
#include "orphan_guard.h"
#include "suite_runner.h"
#include "terminal.h"

namespace {

using namespace ncclfi::cli;

// Every command and global option; `status` receives the exit status of the command that ran.
void define_commands(CLI::App& app, int& status, std::string& color) {
  // Before the subcommands: each takes its parent's formatter when it is added.
  app.formatter(help_formatter());
  app.footer(
      "Exit status: 0 all verdicts pass, 1 some failed or unknown, 2 bad input, 3 harness error or "
      "interrupted.\n"
      "Environment: NO_COLOR (set: no colours unless --color always).\n"
      "Examples:\n"
      "  ncclfi run scenarios/cpu/                 run the CPU catalogue\n"
      "  ncclfi run scenarios/cpu/ --repeat 5      each scenario 5 times: pass rate per scenario\n"
      "  ncclfi validate scenarios/                check every scenario file\n"
      "  ncclfi list faults                        the fault kinds per layer\n"
      "  ncclfi report runs/net-drop-recv-hang/latest\n"
      "  ncclfi sweep scenarios/cpu/net-stall-survived.json --set timeout_s=1,2,4\n"
      "  ncclfi diagnose /path/to/job/logs/       the culprit of a failed job, from its logs alone");
  app.set_version_flag("--version",
                       std::string("ncclfi ") + kVersion + "\nbuilt against NCCL " + kBuiltNcclVersion +
                           ", CUDA " + kBuiltCudaVersion,
                       "print the version and the NCCL and CUDA versions it was built against");
  add_choice_option<std::string>(
      app, "--color", color, {{"always", "always"}, {"auto", "auto"}, {"never", "never"}}, "WHEN",
      "colour the console output: auto (a terminal, NO_COLOR unset), always, never", "auto");
  // Global options are accepted after the subcommand too (ncclfi run x --color never).
  app.fallthrough();
  app.require_subcommand(1);
  add_run_command(app, status);
  add_validate_command(app, status);
  add_list_command(app, status);
  add_report_command(app, status);
  add_control_commands(app, status);
  add_sweep_command(app, status);
  add_timeouts_command(app, status);
  add_diagnose_command(app, status);
  add_score_command(app, status);
  add_agent_command(app, status);
  add_lab_command(app, status);
  add_generator_commands(app, status);
  // The color mode is set before any subcommand callback runs (they run after the whole parse).
  app.parse_complete_callback([&color] { set_color_mode(parse_color_mode(color)); });
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ncclfi: inject faults into NCCL jobs and judge how the job and its safety nets react.",
               "ncclfi"};
  int status = 0;
  std::string color = "auto";
  define_commands(app, status, color);
  const std::vector<std::string> args(argv + 1, argv + argc);
  // At each <TAB>: no guard process, no signal handlers, nothing but the answer.
  if (!args.empty() && args.front() == "__complete") {
    return print_completions(app, std::vector<std::string>(args.begin() + 1, args.end()));
  }
  // Before any thread exists: the guard that kills the ranks if ncclfi is killed.
  OrphanGuard::start();
  install_interrupt_handlers();
  if (args.empty()) {
    std::cerr << app.help()
              << "\nncclfi: give a command (run, validate, list, report, sweep, timeouts, arm, disarm, "
                 "abort, lab, diagnose).\n";
    return kBadInput;
  }
  if (const auto error = unknown_name_error(app, args)) {
    std::cerr << *error << "\n";
    return kBadInput;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --version
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kBadInput;
  } catch (const std::exception& e) {
    std::cerr << "ncclfi: " << e.what() << "\n";
    return kHarnessError;
  }
  return status;
}
