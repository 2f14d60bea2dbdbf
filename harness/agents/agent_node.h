// `ncclfi agent`: the harness's hands on one node of a multi-node job (docs/multihost.md). Started by
// the job's launcher once per node (mpirun --map-by ppr:1:node, srun --ntasks-per-node=1), it dials the
// harness, proves the drill's secret and checks the harness's proof, then, until the harness says quit
// or is lost: finds the job's ranks on its node (by NCCLFI_HARNESS_ID and their rank variables), streams
// the event lines its ranks write to the node-local spool directory, reports ranks that appear and end,
// and carries out the proc faults, arm/disarm and teardown the harness sends. Losing the harness tears
// its ranks down: a drill never outlives the tool that runs it.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace ncclfi::cli {

// The one question an agent asks before it carries out a fault on its node: a proc fault's signal
// ("signal"), arming or disarming a fault ("arm", "disarm"), a link fault's qdisc ("link"). Whoever starts
// the agent decides (a host allow-list, a dry run); the default allows everything. Teardown is never asked:
// stopping is always safe. A refusal is loud: the agent writes an `injection_refused` event (its host,
// the layer, the action, why) that reaches the run's events, and answers the harness `refused`, which
// records no injection and does not ask again.
struct FaultGate {
  // `action`: "signal", "arm", "disarm" or "link"; `what`: the signal number, the fault id, or the
  // device and qdisc; `rank`: -1 for all. Returns "" when allowed, else why not (one line).
  std::function<std::string(const std::string& action, const std::string& what, int rank)> refusal =
      [](const std::string&, const std::string&, int) { return std::string(); };
};

struct AgentConfig {
  std::string harness_addr;  // host:port
  std::string secret;
  std::string harness_id;  // the job's NCCLFI_HARNESS_ID: which processes are its ranks
  std::string spool_dir;   // node-local: the ranks' events.jsonl and control FIFOs
  double grace_s = 3;      // SIGTERM to SIGKILL at teardown
};

// From the environment (agent_protocol.h's variables, NCCLFI_HARNESS_ID); throws with the missing name.
AgentConfig agent_config_from_env();

// This node's ranks of the job: rank -> pids (proc_scan.h: the job's ranks in this host's UTS
// namespace, not agents themselves, nor, unless `with_wrappers`, the `agent --exec` wrappers that hold
// the ranks' places).
std::map<int, std::vector<int>> node_rank_pids(const std::string& harness_id, bool with_wrappers = false);

// Asks a running agent to stop as if the harness were lost: it tears its node's ranks down, sends what
// is left, removes its spool and returns 3. Async-signal-safe: `ncclfi agent` calls it on SIGTERM, SIGINT
// and SIGHUP, so that a launcher ending its tasks leaves nothing of the drill on the node.
void request_agent_stop();
bool agent_stop_requested();

// Runs the agent; returns its exit status (0 the harness said quit, 3 the harness was lost, refused or
// the agent stopped by a signal). Its spool directory is removed however it ends.
int run_agent(const AgentConfig& config, const FaultGate& gate);

}  // namespace ncclfi::cli
