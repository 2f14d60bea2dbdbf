// The `mpirun` launcher (Open MPI 4.1): the ranks under one mpirun, on this host or on `nodes` hosts
// with one node agent each; also the node launcher of torchrun across nodes.
#include <unistd.h>

#include "launch_context.h"
#include "launcher_spec.h"
#include "launcher_support.h"
#include "scenario.h"

namespace ncclfi::cli {
namespace {

// The arguments that place processes on the job's nodes (a hostfile, a partition): the launcher's own
// extra_args, or its node_launcher_args when it starts another launcher's processes (torchrun's).
std::vector<std::string> placement_args(const LaunchContext& ctx) {
  const LaunchSettings& l = ctx.scenario->launcher;
  return launch::substituted(l.node_launcher.empty() ? l.extra_args : l.node_launcher_args, ctx);
}

// mpirun with one process on each of the job's nodes.
std::vector<std::string> one_per_node_argv(const LaunchContext& ctx, bool tag_output) {
  std::vector<std::string> argv = {"mpirun", "--allow-run-as-root", "--oversubscribe"};
  if (tag_output) argv.push_back("--tag-output");
  argv.insert(argv.end(), {"--map-by", "ppr:1:node", "-np", std::to_string(ctx.scenario->launcher.nodes)});
  return argv;
}

// One `ncclfi agent` per node through mpirun (--map-by ppr:1:node) with `args` (the job's --hostfile).
// The secret is forwarded by name (-x NAME): its value stays off every command line.
ProcessSpec mpirun_agents(const LaunchContext& ctx, const std::vector<std::string>& args) {
  ProcessSpec spec = launch::agent_launcher_process(ctx);
  spec.argv = one_per_node_argv(ctx, /*tag_output=*/true);
  for (const char* name : {kAgentAddrVar, kAgentSecretVar, kAgentSpoolVar, "NCCLFI_HARNESS_ID"}) {
    spec.argv.push_back("-x");
    spec.argv.push_back(name);
  }
  if (ctx.allowed_hosts) {
    spec.argv.push_back("-x");
    spec.argv.push_back("NCCLFI_ALLOWED_HOSTS");
  }
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.argv.push_back(ctx.install.bin_dir + "/ncclfi");
  spec.argv.push_back("agent");
  return spec;
}

// mpirun (Open MPI 4.1): one mpirun process; variables forwarded with -x (LD_PRELOAD there, never in
// mpirun's own environment); --tag-output prefixes each line with [jobid,rank]<stream>:.
class MpirunLauncher : public RankLauncher {
 public:
  std::vector<ProcessSpec> processes(const LaunchContext& ctx) const override {
    ProcessSpec spec = launch::launcher_process(ctx);
    const int world = ctx.scenario->workload.ranks;
    spec.argv = {"mpirun", "--allow-run-as-root", "--oversubscribe", "--tag-output",
                 "-np",    std::to_string(world)};
    auto vars = launch::injection_env_for_all_ranks(ctx);
    if (!vars.count("MASTER_ADDR"))
      vars["MASTER_ADDR"] = launch::default_master_addr(ctx);  // the scenario's wins
    vars["MASTER_PORT"] = std::to_string(ctx.master_port);
    vars["NCCLFI_HARNESS_ID"] = ctx.harness_id;
    for (const auto& [k, v] : vars) {
      spec.argv.push_back("-x");
      spec.argv.push_back(k + "=" + v);
    }
    for (const auto& [k, v] : ctx.inject_channel_env) {  // by name: the value stays in the environment
      spec.argv.push_back("-x");
      spec.argv.push_back(k);
    }
    for (const auto& a : launch::extra_args(ctx)) spec.argv.push_back(a);
    for (const auto& a : workload_argv(ctx, -1)) spec.argv.push_back(a);
    return {spec};
  }
  // One agent per node of the hostfile, the same extra arguments as the job (its --hostfile).
  std::optional<ProcessSpec> agent_process(const LaunchContext& ctx) const override {
    return mpirun_agents(ctx, placement_args(ctx));
  }
  int rank_of_line(const std::string& line) const override {
    static const harness::LineRegex prefix(R"(^\[\d+,(\d+)\]<(stdout|stderr)>:)");
    return launch::rank_from_prefix(line, prefix);
  }
  // One process per node (--map-by ppr:1:node), with no --tag-output: its prefix would name the node's
  // process, not the rank of the line. The command dies with its parent (mpirun, or the node's orted):
  // a torchrun whose workers died waits in the c10d rendezvous inside a C++ call, where Python runs no
  // signal handler, and mpirun's SIGTERM and its daemons' exit left it running.
  std::optional<ProcessSpec> one_per_node(const LaunchContext& ctx,
                                          const std::vector<std::string>& node_args) const override {
    ProcessSpec spec = launch::launcher_process(ctx);
    spec.argv = one_per_node_argv(ctx, /*tag_output=*/false);
    spec.argv.insert(spec.argv.end(), node_args.begin(), node_args.end());
    spec.argv.insert(spec.argv.end(), {"setpriv", "--pdeathsig", "KILL"});
    return spec;
  }
};

std::string unmet() {
  return command_on_path("mpirun") ? "" : "needs `mpirun` on PATH";
}

}  // namespace

extern const LauncherSpec kMpirunLauncher = {
    .name = "mpirun",
    .summary =
        "Open MPI's mpirun starts every rank (on `nodes` hosts with a node agent each); injection "
        "variables go to the ranks with -x",
    .reach = LauncherReach::kNodes,
    .unmet_requirement = unmet,
    .make = [] { return std::unique_ptr<RankLauncher>(new MpirunLauncher); },
};

}  // namespace ncclfi::cli
