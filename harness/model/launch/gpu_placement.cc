#include "gpu_placement.h"

#include <algorithm>
#include <string>

namespace ncclfi::cli {

std::string GpuPlacement::describe() const {
  if (!gpu_job) return "";
  const std::string of = std::to_string(ranks) + " rank" + (ranks == 1 ? "" : "s") + " on " +
                         std::to_string(gpus) + " GPU" + (gpus == 1 ? "" : "s");
  return shared ? of + " (shared: a host per rank, network path)" : of;
}

GpuPlacement place_on_gpus(const Scenario& s, int visible_gpus, GpuSharing sharing) {
  GpuPlacement p;
  p.gpu_job = s.required_gpus > 0;
  p.ranks = s.workload.ranks;
  if (!p.gpu_job) return p;
  const int needed = s.required_gpus;
  const bool too_few = needed > visible_gpus;
  const std::string count =
      "needs " + std::to_string(needed) + " GPUs, " + std::to_string(visible_gpus) + " visible";
  if (visible_gpus < 1) {
    p.skip = count;
    return p;
  }
  const bool want_shared = sharing == GpuSharing::kAlways || (sharing == GpuSharing::kAuto && too_few);
  if (!want_shared) {
    if (too_few) p.skip = count + " (shared-GPU mode is off)";
    p.gpus = needed;
    return p;
  }
  if (s.needs_intra_node_paths) {
    p.skip =
        too_few ? count +
                      "; it needs intra-node paths (P2P/NVLink), which shared-GPU mode replaces "
                      "with the network path"
                : "needs intra-node paths (P2P/NVLink), which shared-GPU mode replaces with the network path";
    return p;
  }
  p.shared = true;
  // Asked for: every rank on one GPU. Needed: the ranks spread over every visible GPU.
  p.gpus = sharing == GpuSharing::kAlways ? 1 : std::max(1, std::min(visible_gpus, p.ranks));
  return p;
}

}  // namespace ncclfi::cli
