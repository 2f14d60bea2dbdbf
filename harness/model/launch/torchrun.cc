// The `torchrun` launcher: one torchrun (on this host, or on each node through a node launcher) that
// starts and restarts its node's workers.
#include <algorithm>

#include "launch_context.h"
#include "launcher_spec.h"
#include "launcher_support.h"
#include "scenario.h"

namespace ncclfi::cli {
namespace {

// torchrun: one torchrun per node (this host's alone without a node launcher) that starts and restarts
// that node's workers. The injection variables reach the workers only, through
// `--no_python env K=V... PROGRAM ARGS`. Options are spelled with underscores: PyTorch 2.x takes both
// spellings, 1.13 (Debian's python3-torch) only these.
//
// Across nodes (launcher.node_launcher), the node launcher (mpirun's or srun's one_per_node) starts one
// torchrun per node with a c10d rendezvous on MASTER_ADDR:PORT (the scenario's MASTER_ADDR,
// else this host's name: ncclfi runs on the first node), and one node agent per node the same way. Each
// worker runs under `ncclfi agent --exec`, so its fate is recorded on its own host and proc faults hit
// the program. torchrun itself runs without NCCLFI_HARNESS_ID (`env -u`): it carries the node
// launcher's rank variable (OMPI_COMM_WORLD_RANK, SLURM_PROCID), and the id is what makes a process
// with a rank variable one of the job's ranks. If ncclfi dies, the agents end the workers, and each
// torchrun ends with mpirun or its node's orted (setpriv --pdeathsig: mpirun's process group is the
// orphan guard's) or with the srun step (scancelled by its name).
class TorchrunLauncher : public RankLauncher {
 public:
  std::vector<ProcessSpec> processes(const LaunchContext& ctx) const override {
    ProcessSpec spec = launch::launcher_process(ctx);
    if (const LauncherSpec* nodes = node_launcher_of(*ctx.scenario)) {
      const auto node_args = launch::substituted(ctx.scenario->launcher.node_launcher_args, ctx);
      spec = *nodes->make()->one_per_node(ctx, node_args);
      spec.argv.insert(spec.argv.end(), {"env", "-u", "NCCLFI_HARNESS_ID"});
    }
    for (auto& a : torchrun_argv(ctx)) spec.argv.push_back(std::move(a));
    // The scenario's env is the job's environment, torchrun's own included, as when a user exports it
    // before calling torchrun: its agent reads some (TORCH_DISABLE_SHARE_RDZV_TCP_STORE, PET_*). Across
    // nodes it reaches the other nodes' torchrun as far as the node launcher forwards its environment.
    for (const auto& [name, value] : ctx.scenario->env) spec.env[name] = value;
    return {spec};
  }
  // One node agent per node, started by the node launcher (none on this host alone).
  std::optional<ProcessSpec> agent_process(const LaunchContext& ctx) const override {
    const LauncherSpec* nodes = node_launcher_of(*ctx.scenario);
    return nodes != nullptr ? nodes->make()->agent_process(ctx) : std::nullopt;
  }
  int rank_of_line(const std::string& line) const override {
    static const harness::LineRegex prefix(R"(^\[(?:default)?rank(\d+)\]:)");
    return launch::rank_from_prefix(line, prefix);
  }

 private:
  // `torchrun ... --no_python env VARS... PROGRAM ARGS`, the same command on every node.
  static std::vector<std::string> torchrun_argv(const LaunchContext& ctx) {
    const Scenario& s = *ctx.scenario;
    const int nodes = std::max(1, s.launcher.nodes);
    const auto addr = s.env.find("MASTER_ADDR");
    const std::string master = addr != s.env.end() ? addr->second : launch::default_master_addr(ctx);
    const std::string port = std::to_string(ctx.master_port);
    std::vector<std::string> argv = {"torchrun", "--nnodes=" + std::to_string(nodes),
                                     "--nproc_per_node=" + std::to_string(s.workload.ranks / nodes),
                                     "--max_restarts=" + std::to_string(s.launcher.max_restarts)};
    // A c10d rendezvous, on one host too (what `torchrun --standalone` does): the store on MASTER_ADDR's
    // torchrun, the others dial it. Under the static rendezvous (--master_addr/--master_port), a restarted
    // generation of workers shares the first generation's store and can read its keys: measured with
    // PyTorch 2.11, a restarted rank took the dead generation's NCCL unique id and failed to connect
    // (docs/failure-signatures.md, shared-GPU mode).
    argv.push_back("--rdzv_backend=c10d");
    argv.push_back("--rdzv_endpoint=" + master + ":" + port);
    argv.push_back("--rdzv_id=" + ctx.harness_id);
    argv.push_back("--no_python");
    for (const auto& a : launch::extra_args(ctx)) argv.push_back(a);
    auto vars = launch::injection_env_for_all_ranks(ctx);
    // torchrun gives its workers MASTER_ADDR and MASTER_PORT (rank 0's host and a port it picked); the
    // scenario's MASTER_ADDR names the rendezvous endpoint.
    vars.erase("MASTER_ADDR");
    vars.erase("MASTER_PORT");
    if (!s.launcher.node_launcher.empty())
      vars["NCCLFI_HARNESS_ID"] = ctx.harness_id;  // not torchrun's (above)
    launch::append_env_command(argv, vars, ctx);
    return argv;
  }
};

// Across nodes: a node launcher and a node count, and the same number of workers on every node.
void check(const Scenario& s, std::vector<ScenarioError::Problem>& problems) {
  const LaunchSettings& l = s.launcher;
  if (l.nodes > 0 && l.node_launcher.empty()) {
    problems.push_back({"/launcher/node_launcher",
                        "\"mpirun\" or \"srun\" with torchrun across nodes: the launcher that starts one "
                        "torchrun and one node agent per node",
                        "none, with nodes " + std::to_string(l.nodes)});
  }
  if (!l.node_launcher.empty() && l.nodes <= 0) {
    problems.push_back(
        {"/launcher/nodes", "the number of nodes the node launcher starts a torchrun on", "none"});
  }
  if (l.nodes > 0 && s.workload.ranks % l.nodes != 0) {
    problems.push_back({"/workload/ranks",
                        "a multiple of /launcher/nodes (" + std::to_string(l.nodes) +
                            "): each node's torchrun starts ranks / nodes workers",
                        std::to_string(s.workload.ranks)});
  }
}

std::string unmet() {
  return command_on_path("torchrun") ? "" : "needs `torchrun` on PATH";
}

}  // namespace

extern const LauncherSpec kTorchrunLauncher = {
    .name = "torchrun",
    .summary =
        "PyTorch's torchrun starts and restarts the workers (max_restarts), on this host or on "
        "`nodes` hosts through a node launcher",
    .workload = LauncherWorkload::kCommand,
    .reach = LauncherReach::kThroughNodeLauncher,
    .restarts_workers = true,
    .unmet_requirement = unmet,
    .check = check,
    .make = [] { return std::unique_ptr<RankLauncher>(new TorchrunLauncher); },
};

}  // namespace ncclfi::cli
