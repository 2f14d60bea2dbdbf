// How a scenario's GPU ranks go on this host's GPUs: one GPU per rank (dedicated), or several ranks per
// GPU (shared-GPU mode, ncclfi/shared_gpu.h) when the scenario needs more GPUs than the host has, or
// when asked. Scenarios that need real intra-node paths (P2P, NVLink) declare it and are skipped in
// shared mode: there their ranks would talk over the network path instead.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "scenario.h"

namespace ncclfi::cli {

enum class GpuSharing {
  kAuto,    // shared when the scenario needs more GPUs than are visible
  kAlways,  // every GPU rank on one GPU, however many are visible (to test the mode, or compare)
  kNever,   // never: a scenario that needs more GPUs than are visible is skipped
};

struct GpuPlacement {
  bool gpu_job = false;  // the scenario needs GPUs (requires.gpus > 0)
  bool shared = false;   // several ranks per GPU, each a host of its own
  int gpus = 0;          // GPUs the job runs on
  int ranks = 0;
  std::string skip;  // non-empty: the job cannot run on this host, and why
  // "2 ranks on 1 GPU (shared: a host per rank, network path)" or "2 ranks on 2 GPUs".
  std::string describe() const;
};

GpuPlacement place_on_gpus(const Scenario& scenario, int visible_gpus, GpuSharing sharing);

}  // namespace ncclfi::cli
