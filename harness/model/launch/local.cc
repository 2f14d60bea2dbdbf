// The `local` launcher: one process per rank on this host, with torchrun-style rendezvous variables.
#include "launch_context.h"
#include "launcher_spec.h"
#include "launcher_support.h"

namespace ncclfi::cli {
namespace {

class LocalLauncher : public RankLauncher {
 public:
  std::vector<ProcessSpec> processes(const LaunchContext& ctx) const override {
    return launch::processes_on_this_host(ctx, /*per_rank=*/true);
  }
};

}  // namespace

extern const LauncherSpec kLocalLauncher = {
    .name = "local",
    .summary = "one process per rank on this host, with RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT set",
    .make = [] { return std::unique_ptr<RankLauncher>(new LocalLauncher); },
};

}  // namespace ncclfi::cli
