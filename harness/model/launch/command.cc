// The `command` launcher: the workload's command on this host, once per rank (rendezvous variables
// set) or, with `per_rank: false`, once for the whole job (a command that starts every rank itself).
#include "launch_context.h"
#include "launcher_spec.h"
#include "launcher_support.h"

namespace ncclfi::cli {
namespace {

class CommandLauncher : public RankLauncher {
 public:
  std::vector<ProcessSpec> processes(const LaunchContext& ctx) const override {
    return launch::processes_on_this_host(ctx, ctx.scenario->launcher.per_rank);
  }
};

}  // namespace

extern const LauncherSpec kCommandLauncher = {
    .name = "command",
    .summary = "the workload's command on this host, once per rank or (per_rank false) once for the job",
    .workload = LauncherWorkload::kCommand,
    .per_rank_option = true,
    .make = [] { return std::unique_ptr<RankLauncher>(new CommandLauncher); },
};

}  // namespace ncclfi::cli
