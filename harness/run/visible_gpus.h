// How many GPUs this host shows ncclfi (what gpu_placement.h places a scenario's ranks on).
#pragma once

namespace ncclfi::cli {

// The GPUs `nvidia-smi -L` lists (NCCLFI_VISIBLE_GPUS overrides it; 0 without nvidia-smi).
int count_visible_gpus();

}  // namespace ncclfi::cli
