// `ncclfi agent`: the node agent a launcher starts on each node of a multi-node job (agent_node.h).
#include <signal.h>

#include <iostream>

#include "agent_node.h"
#include "agent_protocol.h"
#include "agent_rank_exec.h"
#include "commands.h"
#include "ncclfi/host_allow.h"
#include "suite_runner.h"

namespace ncclfi::cli {

void add_agent_command(CLI::App& app, int& status) {
  auto* cmd = app.add_subcommand(
      "agent",
      "run on each node of a multi-node job (started by the job's launcher): carry out the harness's "
      "faults there and stream the node's events to it");
  cmd->footer(
      "Configured by the environment the harness gives the launcher (docs/multihost.md): NCCLFI_AGENT_ADDR "
      "(host:port of the harness), NCCLFI_AGENT_SECRET (the drill's secret: never on a command line), "
      "NCCLFI_AGENT_SPOOL (node-local directory of the ranks' events), NCCLFI_HARNESS_ID.\n"
      "Exit status: 0 the harness ended the drill, 3 the harness was lost or refused.\n"
      "Example (what the mpirun launcher runs):\n"
      "  mpirun --map-by ppr:1:node -np 3 --hostfile hosts -x NCCLFI_AGENT_ADDR -x NCCLFI_AGENT_SECRET ... "
      "ncclfi agent");
  static bool exec = false;
  cmd->add_flag(
      "--exec", exec,
      "run the rank given after -- and record how it ended (what the launchers start in each rank's "
      "place when a job has node agents)");
  static std::vector<std::string> program;
  describe_value(
      cmd->add_option("program", program, "with --exec: the rank's program and its arguments (after --)"),
      ValueKind::kFile, "PROGRAM");
  cmd->callback([&status] {
    if (exec) {
      status = exec_rank_and_report(program);
      return;
    }
    AgentConfig config;
    try {
      config = agent_config_from_env();
    } catch (const std::exception& e) {
      std::cerr << e.what() << "\n";
      status = kBadInput;
      return;
    }
    // Outside the drill's allow-list the agent carries out no fault on its node: each refusal is an
    // injection_refused event naming the list (agent_node.h), and the warning goes to its log once.
    FaultGate gate;
    gate.refusal = [](const std::string&, const std::string&, int) {
      std::string warning;
      if (host_allowed(&warning)) return std::string();
      static bool said = false;
      if (!said) agent_log_line(warning);
      said = true;
      return "not in the allowed hosts (" + allow_list_from_env().describe() + ")";
    };
    // A launcher ends its tasks with SIGTERM (SIGINT, SIGHUP from a terminal): the agent then tears
    // its node's ranks down and removes its spool rather than dying with them left behind.
    struct sigaction stop {};
    stop.sa_handler = [](int) { request_agent_stop(); };
    sigemptyset(&stop.sa_mask);
    for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaction(sig, &stop, nullptr);
    status = run_agent(config, gate);
  });
}

}  // namespace ncclfi::cli
