// ncclfi: fault-injection and resilience tests for NCCL jobs. Exit status: 0 every
// verdict passed, 1 some failed (or unknown), 2 bad input, 3 harness error or interrupted.
#include <iostream>

#include "commands.h"
#include "interrupt.h"
#include "orphan_guard.h"
#include "suite_runner.h"

int main(int argc, char** argv) {
  using namespace ncclfi::cli;
  // Before any thread exists: the guard that kills the ranks if ncclfi is killed.
  OrphanGuard::start();
  install_interrupt_handlers();
  CLI::App app{"ncclfi: inject faults into NCCL jobs and judge how the job and its safety nets react."};
  app.footer(
      "Exit status: 0 all verdicts pass, 1 some failed, 2 bad input, 3 harness error or interrupted.\n"
      "Examples:\n"
      "  ncclfi run scenarios/cpu/                 run the CPU catalogue\n"
      "  ncclfi validate scenarios/                check every scenario file\n"
      "  ncclfi list faults                        the fault kinds per layer\n"
      "  ncclfi report runs/net-drop-recv-hang/latest\n"
      "  ncclfi sweep scenarios/cpu/net-stall-survived.json --set /workload/args/5=1,2,4");
  app.require_subcommand(1);
  int status = 0;
  add_run_command(app, status);
  add_validate_command(app, status);
  add_list_command(app, status);
  add_report_command(app, status);
  add_control_commands(app, status);
  add_sweep_command(app, status);
  add_timeouts_command(app, status);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
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
