// The node agents of one attempt (launcher.nodes, docs/multihost.md): the hub they dial, the process
// that starts one agent per node, the wait for every one of them to prove the drill's secret before the
// job starts (the ranks write their events where only their agent reads them), and their end: each
// tears down what is left on its node and sends its last events and output; their launcher then ends,
// or is ended.
#pragma once

#include <memory>
#include <string>

#include "agent_hub.h"
#include "attempt_clock.h"
#include "history.h"
#include "launch_context.h"
#include "rank_process.h"

namespace ncclfi::cli {

class NodeAgents {
 public:
  // Starts the hub and the agents (in `cgroup_procs` when not empty) and waits for them; fills `ctx`
  // with the hub's address, the secret, the node-local spool directory and a fresh master port.
  // `inject`: the attempt's link faults must be possible on every node. Throws std::runtime_error when
  // that fails or some agent did not come (after stopping those that did).
  NodeAgents(LaunchContext& ctx, const RankLauncher& launcher, const std::string& cgroup_procs, bool inject,
             const AttemptClock& clock);
  NodeAgents(const NodeAgents&) = delete;

  AgentHub& hub() { return *hub_; }
  // Asks every agent to quit (each waits out the scenario's grace period to tear its ranks down), then
  // ends their launcher (SIGTERM, then SIGKILL, 3 s each). The hub stays, with what the agents sent.
  void stop();
  // What the agents streamed of each rank's output, and its final tail, into the history (the reports);
  // `log_dir_rel`: the attempt's log directory relative to the run directory.
  void record_rank_output(harness::History& history, int attempt, const std::string& log_dir_rel) const;

 private:
  void start(LaunchContext& ctx, const RankLauncher& launcher, const std::string& cgroup_procs, bool inject);

  const AttemptClock& clock_;
  double grace_s_ = 0;
  std::unique_ptr<AgentHub> hub_;
  std::unique_ptr<RankProcess> process_;  // the agents' launcher; null once stopped
  std::string slurm_job_name_;
  std::string local_spool_;  // this host's agent's spool directory (removed by stop())
};

}  // namespace ncclfi::cli
