// What the launcher files share: the environment every process of a job gets, the process that serves
// every rank, the node agents' processes, and reading a rank from a launcher's line prefix. Used only by
// the files of this folder.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "launch_context.h"
#include "line_regex.h"

namespace ncclfi::cli::launch {

// <log_dir>/rank-N.log, or launcher.log for the process serving every rank (rank -1).
std::string rank_log_name(const LaunchContext& ctx, int rank);
// ncclfi's environment, plus the harness id the orphan guard recognises and the job's MPS daemon.
std::map<std::string, std::string> base_env(const LaunchContext& ctx);
// The ranks that run as the same node as `rank` (the same name in launcher.hostnames), in rank order;
// empty when the ranks name no nodes.
std::vector<int> ranks_on_node_of(const std::vector<std::string>& hostnames, int rank);
// torchrun-style rendezvous variables for one rank on this host. Ranks that name their nodes get their
// index and count on that node (LOCAL_RANK, LOCAL_WORLD_SIZE) and the node's ranks (NCCLFI_NODE_RANKS:
// the net shim's connections to them stay inside the node, off the NIC).
void add_rendezvous(std::map<std::string, std::string>& env, const LaunchContext& ctx, int rank);
// One process per rank (or, with per_rank false, one process for the whole job) on this host.
std::vector<ProcessSpec> processes_on_this_host(const LaunchContext& ctx, bool per_rank);
// The one process of a launcher that serves every rank: ncclfi's environment (never the injection
// variables), its output, every rank's lines together, in launcher.log.
ProcessSpec launcher_process(const LaunchContext& ctx);
// The process that starts the node agents: launcher_process plus the agents' variables (the secret in
// the environment, never in argv), its output in agents.log.
ProcessSpec agent_launcher_process(const LaunchContext& ctx);
// Rank 0's address when the scenario's env names none: loopback on one host; this host's name when the
// job spans nodes (rank 0 runs where the launcher runs: the first host of a hostfile or allocation).
std::string default_master_addr(const LaunchContext& ctx);
// Arguments with their placeholders replaced ({env:NAME} names a hostfile, for one).
std::vector<std::string> substituted(const std::vector<std::string>& args, const LaunchContext& ctx);
// The scenario's launcher.extra_args, substituted.
std::vector<std::string> extra_args(const LaunchContext& ctx);
// The injection variables a launcher hands to all its ranks at once: each rank takes its rank from the
// launcher's own variables (OMPI_COMM_WORLD_RANK, SLURM_PROCID, torchrun's RANK), not NCCLFI_RANK.
std::map<std::string, std::string> injection_env_for_all_ranks(const LaunchContext& ctx);
// Appends `env K=V ... PROGRAM ARGS`: how srun and torchrun pass variables to their ranks and not to
// themselves.
void append_env_command(std::vector<std::string>& argv, const std::map<std::string, std::string>& vars,
                        const LaunchContext& ctx);
// The rank a launcher's line prefix names (its first capture group), or -1 (also for a number too
// large for an int).
int rank_from_prefix(const std::string& line, const harness::LineRegex& prefix);

}  // namespace ncclfi::cli::launch
