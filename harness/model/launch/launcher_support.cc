// What the launcher files share (launcher_support.h).
#include "launcher_support.h"

#include <algorithm>
#include <charconv>

#include "ncclfi/event_log.h"

namespace ncclfi::cli::launch {

std::string rank_log_name(const LaunchContext& ctx, int rank) {
  return ctx.log_dir + "/" + (rank < 0 ? std::string("launcher") : "rank-" + std::to_string(rank)) + ".log";
}

// Environment every process of the job gets: ncclfi's, plus the harness id the orphan guard
// recognises (the launcher process too, so its children are found if it dies).
std::map<std::string, std::string> base_env(const LaunchContext& ctx) {
  auto env = ctx.parent_env;
  env["NCCLFI_HARNESS_ID"] = ctx.harness_id;
  for (const auto& [k, v] : ctx.mps_env) env[k] = v;
  // The launchers (mpirun with -x by name, srun, torchrun, hydra) pass their own environment on to the
  // ranks: the key stays out of every command line.
  for (const auto& [k, v] : ctx.inject_channel_env) env[k] = v;
  return env;
}

std::vector<int> ranks_on_node_of(const std::vector<std::string>& hostnames, int rank) {
  if (rank < 0 || static_cast<size_t>(rank) >= hostnames.size()) return {};
  std::vector<int> ranks;
  for (size_t r = 0; r < hostnames.size(); ++r) {
    if (hostnames[r] == hostnames[static_cast<size_t>(rank)]) ranks.push_back(static_cast<int>(r));
  }
  return ranks;
}

void add_rendezvous(std::map<std::string, std::string>& env, const LaunchContext& ctx, int rank) {
  env["RANK"] = std::to_string(rank);
  env["WORLD_SIZE"] = std::to_string(ctx.scenario->workload.ranks);
  // Ranks that name their nodes (launcher.hostnames) are numbered on their node as torchrun and srun
  // number them; without names every rank is on this one host.
  const std::vector<int> node = ranks_on_node_of(ctx.scenario->launcher.hostnames, rank);
  if (node.empty()) {
    env["LOCAL_RANK"] = std::to_string(rank);
    env["LOCAL_WORLD_SIZE"] = std::to_string(ctx.scenario->workload.ranks);
  } else {
    const auto local = std::find(node.begin(), node.end(), rank) - node.begin();
    env["LOCAL_RANK"] = std::to_string(local);
    env["LOCAL_WORLD_SIZE"] = std::to_string(node.size());
    std::string list;
    for (int r : node) list += (list.empty() ? "" : ",") + std::to_string(r);
    env["NCCLFI_NODE_RANKS"] = list;
    // What NCCL takes for the node's identity over the host's name (init.cc getHostHash): the ranks of
    // one name are one node to NCCL and to ncclfi-cpu-ring.
    env["NCCL_HOSTID"] = ctx.scenario->launcher.hostnames[static_cast<size_t>(rank)];
  }
  env["MASTER_ADDR"] = "127.0.0.1";
  env["MASTER_PORT"] = std::to_string(ctx.master_port);
}

// The one process of a launcher that serves every rank (mpirun, srun, torchrun): ncclfi's environment
// (never the injection variables), its output, every rank's lines together, in launcher.log.
ProcessSpec launcher_process(const LaunchContext& ctx) {
  ProcessSpec spec;
  spec.rank = -1;
  spec.env = base_env(ctx);
  spec.log_path = rank_log_name(ctx, -1);
  return spec;
}

// The process that starts the node agents: ncclfi's environment plus the agents' variables (the secret
// among them: in the environment, never in argv), its output in agents.log.
ProcessSpec agent_launcher_process(const LaunchContext& ctx) {
  ProcessSpec spec = launcher_process(ctx);
  spec.env[kAgentAddrVar] = ctx.agent_addr;
  spec.env[kAgentSecretVar] = ctx.agent_secret;
  spec.env[kAgentSpoolVar] = ctx.agent_spool;
  // The drill's allow-list: each agent checks its own host against it before any fault (cmd_agent.cc).
  if (ctx.allowed_hosts) spec.env["NCCLFI_ALLOWED_HOSTS"] = *ctx.allowed_hosts;
  spec.log_path = ctx.log_dir + "/agents.log";
  return spec;
}

// Rank 0's address when the scenario's env names none: loopback on one host; this host's name when the
// job spans nodes (rank 0 runs where the launcher runs: the first host of a hostfile or allocation).
std::string default_master_addr(const LaunchContext& ctx) {
  return ctx.scenario->launcher.nodes > 1 ? host_name() : "127.0.0.1";
}

// Arguments of the scenario, placeholders replaced ({env:NAME} names a hostfile, for one).
std::vector<std::string> substituted(const std::vector<std::string>& args, const LaunchContext& ctx) {
  std::vector<std::string> out;
  for (const auto& a : args) out.push_back(substitute_placeholders(a, ctx, -1));
  return out;
}

// The launcher's extra arguments.
std::vector<std::string> extra_args(const LaunchContext& ctx) {
  return substituted(ctx.scenario->launcher.extra_args, ctx);
}

// The injection variables that a launcher hands to all its ranks at once: each rank takes its own rank
// from the launcher's variables (OMPI_COMM_WORLD_RANK, SLURM_PROCID, torchrun's RANK), not NCCLFI_RANK.
std::map<std::string, std::string> injection_env_for_all_ranks(const LaunchContext& ctx) {
  auto vars = injection_env(ctx, -1);
  vars.erase("NCCLFI_RANK");
  return vars;
}

// `env K=V ... PROGRAM ARGS`: how srun and torchrun pass variables to their ranks and not to themselves.
void append_env_command(std::vector<std::string>& argv, const std::map<std::string, std::string>& vars,
                        const LaunchContext& ctx) {
  argv.push_back("env");
  for (const auto& [k, v] : vars) argv.push_back(k + "=" + v);
  for (const auto& a : workload_argv(ctx, -1)) argv.push_back(a);
}

// The rank a launcher's line prefix names (its first capture group), or -1.
// A number too large for an int is no rank.
int rank_from_prefix(const std::string& line, const harness::LineRegex& prefix) {
  std::string digits;
  if (!prefix.search(line, &digits)) return -1;
  int rank = -1;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), rank);
  return ec == std::errc() && end == digits.data() + digits.size() ? rank : -1;
}

std::vector<ProcessSpec> processes_on_this_host(const LaunchContext& ctx, bool per_rank) {
  std::vector<ProcessSpec> specs;
  const int world = ctx.scenario->workload.ranks;
  for (int r = 0; r < (per_rank ? world : 1); ++r) {
    const int rank = per_rank ? r : -1;
    ProcessSpec spec;
    spec.rank = rank;
    spec.argv = workload_argv(ctx, rank);
    spec.env = base_env(ctx);
    if (rank >= 0) add_rendezvous(spec.env, ctx, rank);
    for (auto& [k, v] : injection_env(ctx, rank)) spec.env[k] = v;
    spec.log_path = rank_log_name(ctx, rank);
    const auto& names = ctx.scenario->launcher.hostnames;
    if (rank >= 0 && static_cast<size_t>(rank) < names.size())
      spec.hostname = names[static_cast<size_t>(rank)];
    specs.push_back(std::move(spec));
  }
  return specs;
}

}  // namespace ncclfi::cli::launch
