// The `hydra` launcher: MPICH's mpiexec.hydra (the launcher of MPICH, MVAPICH and Intel MPI), every rank
// on this host. Hydra has no per-rank variable like Open MPI's OMPI_COMM_WORLD_RANK that every workload
// reads, so each rank is its own MPMD segment ("-n 1 -env NAME VALUE ... PROGRAM : -n 1 ...") with the
// torchrun-style rendezvous variables and its injection variables; -prepend-rank puts "[N] " before each
// line. When a rank dies by a signal, Hydra tears the job down with its "BAD TERMINATION" banner.
#include "launch_context.h"
#include "launcher_spec.h"
#include "launcher_support.h"

namespace ncclfi::cli {
namespace {

class HydraLauncher : public RankLauncher {
 public:
  std::vector<ProcessSpec> processes(const LaunchContext& ctx) const override {
    ProcessSpec spec = launch::launcher_process(ctx);
    spec.argv = {"mpiexec.hydra", "-prepend-rank"};
    for (int rank = 0; rank < ctx.scenario->workload.ranks; ++rank) {
      if (rank > 0) spec.argv.push_back(":");
      spec.argv.insert(spec.argv.end(), {"-n", "1"});
      std::map<std::string, std::string> vars;
      launch::add_rendezvous(vars, ctx, rank);
      for (const auto& [k, v] : injection_env(ctx, rank)) vars[k] = v;
      for (const auto& [k, v] : vars) spec.argv.insert(spec.argv.end(), {"-env", k, v});
      for (const auto& a : launch::extra_args(ctx)) spec.argv.push_back(a);
      for (const auto& a : workload_argv(ctx, rank)) spec.argv.push_back(a);
    }
    return {spec};
  }
  int rank_of_line(const std::string& line) const override {
    static const harness::LineRegex prefix(R"(^\[(\d+)\] )");
    return launch::rank_from_prefix(line, prefix);
  }
};

std::string unmet() {
  return command_on_path("mpiexec.hydra") ? "" : "needs `mpiexec.hydra` on PATH (Debian: the mpich package)";
}

}  // namespace

extern const LauncherSpec kHydraLauncher = {
    .name = "hydra",
    .summary =
        "MPICH's mpiexec.hydra (also MVAPICH's and Intel MPI's launcher) starts every rank on this host, "
        "each "
        "its own MPMD segment with RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT and its injection variables",
    .unmet_requirement = unmet,
    .make = [] { return std::unique_ptr<RankLauncher>(new HydraLauncher); },
};

}  // namespace ncclfi::cli
