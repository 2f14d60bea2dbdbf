// The `srun` launcher (Slurm): the ranks as one job step, on this host or on `nodes` hosts with one node
// agent each; also the node launcher of torchrun across nodes.
#include <cstdlib>
#include <filesystem>

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

// One `ncclfi agent` per node of the job's nodes through srun (a job step of its own,
// --ntasks-per-node=1); srun hands its own environment, the secret included, to its tasks.
ProcessSpec srun_agents(const LaunchContext& ctx, const std::vector<std::string>& args) {
  const Scenario& s = *ctx.scenario;
  ProcessSpec spec = launch::agent_launcher_process(ctx);
  spec.slurm_job_name = "ncclfi-" + s.name + "-" + ctx.harness_id + "-agents";
  spec.argv = {"srun",    "--nodes=" + std::to_string(s.launcher.nodes), "--ntasks-per-node=1",
               "--label", "--job-name=" + spec.slurm_job_name,           "--kill-on-bad-exit=0"};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.argv.push_back(ctx.install.bin_dir + "/ncclfi");
  spec.argv.push_back("agent");
  return spec;
}

// srun (Slurm): one srun process for the job step; Slurm's daemons start the tasks, so they are not our
// children: proc faults and the final sweep find them by NCCLFI_HARNESS_ID and SLURM_PROCID in their
// environment. The injection variables reach the tasks only, through `env K=V... program` (srun itself
// propagates its own environment, which must stay free of LD_PRELOAD). --label prefixes each line with
// "R: ". No --kill-on-bad-exit: a rank that dies must leave its peers running, so that their own
// watchdogs are what is judged. MASTER_ADDR: the scenario's env, else the workloads fall back to
// SLURM_LAUNCH_NODE_IPADDR (right on one node; set MASTER_ADDR to rank 0's host on several).
class SrunLauncher : public RankLauncher {
 public:
  std::vector<ProcessSpec> processes(const LaunchContext& ctx) const override {
    const Scenario& s = *ctx.scenario;
    ProcessSpec spec = launch::launcher_process(ctx);
    // A job name unique to this ncclfi process, so the orphan guard can scancel exactly this job.
    spec.slurm_job_name = "ncclfi-" + s.name + "-" + ctx.harness_id;
    spec.argv = {"srun", "--ntasks=" + std::to_string(s.workload.ranks), "--label",
                 "--job-name=" + spec.slurm_job_name, "--kill-on-bad-exit=0"};
    if (s.launcher.nodes > 0) spec.argv.push_back("--nodes=" + std::to_string(s.launcher.nodes));
    for (const auto& a : launch::extra_args(ctx)) spec.argv.push_back(a);
    auto vars = launch::injection_env_for_all_ranks(ctx);
    vars["MASTER_PORT"] = std::to_string(ctx.master_port);
    vars["NCCLFI_HARNESS_ID"] = ctx.harness_id;
    launch::append_env_command(spec.argv, vars, ctx);
    return {spec};
  }
  // One agent per node of the job's nodes, the same extra arguments as the job.
  std::optional<ProcessSpec> agent_process(const LaunchContext& ctx) const override {
    return srun_agents(ctx, placement_args(ctx));
  }
  int rank_of_line(const std::string& line) const override {
    static const harness::LineRegex prefix(R"(^\s*(\d+): )");
    return launch::rank_from_prefix(line, prefix);
  }
  // One task per node of the job's nodes (--ntasks-per-node=1), in a job step named for this ncclfi so
  // that it is scancelled if ncclfi dies (a srun step's processes are killed by slurmstepd).
  std::optional<ProcessSpec> one_per_node(const LaunchContext& ctx,
                                          const std::vector<std::string>& node_args) const override {
    const Scenario& s = *ctx.scenario;
    ProcessSpec spec = launch::launcher_process(ctx);
    spec.slurm_job_name = "ncclfi-" + s.name + "-" + ctx.harness_id;
    spec.argv = {"srun", "--nodes=" + std::to_string(s.launcher.nodes), "--ntasks-per-node=1",
                 "--job-name=" + spec.slurm_job_name, "--kill-on-bad-exit=0"};
    spec.argv.insert(spec.argv.end(), node_args.begin(), node_args.end());
    return spec;
  }
};

std::string unmet() {
  if (!command_on_path("srun")) return "needs `srun` on PATH";
  // Without a configuration srun cannot find a controller (scripts/slurm-local starts a local one).
  const char* conf = std::getenv("SLURM_CONF");
  std::error_code ec;
  if ((conf == nullptr || *conf == '\0') && !std::filesystem::exists("/etc/slurm/slurm.conf", ec))
    return "needs a Slurm cluster: $SLURM_CONF or /etc/slurm/slurm.conf (scripts/slurm-local starts one)";
  return "";
}

}  // namespace

extern const LauncherSpec kSrunLauncher = {
    .name = "srun",
    .summary =
        "Slurm's srun starts every rank as one job step (on `nodes` hosts with a node agent each); "
        "injection variables reach the tasks only",
    .reach = LauncherReach::kNodes,
    .unmet_requirement = unmet,
    .make = [] { return std::unique_ptr<RankLauncher>(new SrunLauncher); },
};

}  // namespace ncclfi::cli
