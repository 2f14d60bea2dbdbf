// Shared-GPU mode: several NCCL ranks on one GPU. NCCL refuses two ranks of one host on one GPU, but
// each rank that names its own host (NCCL_HOSTID) is, to NCCL, alone on its node: the ranks then reach
// each other over the network path (NCCL's Socket transport or the ncclfi shim), as ranks on
// different nodes do. This file decides what makes a rank such a host of its own; the harness applies
// it to the ranks it starts itself, and the preload applies it (before the program's main) to the
// ranks a launcher such as torchrun or mpirun starts.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace ncclfi {

// Set by the harness for launchers that start the ranks themselves: how many GPUs the ranks share,
// and the CUDA_VISIBLE_DEVICES list they share ("" when ncclfi's own was unset).
inline constexpr const char* kSharedGpusVar = "NCCLFI_SHARED_GPUS";
inline constexpr const char* kSharedGpuListVar = "NCCLFI_SHARED_GPU_LIST";

// The variables that make `rank` a host of its own on GPU (rank mod gpus):
//   NCCL_HOSTID=ncclfi-shared-<rank>  (NCCL's host identity: every rank a node of its own)
//   CUDA_VISIBLE_DEVICES=<that GPU>   (from `visible_list` when it names GPUs, else its index)
//   LOCAL_RANK=0, LOCAL_WORLD_SIZE=1  (one rank per "node": a script's set_device(LOCAL_RANK) works)
// Empty when rank < 0 or gpus < 1.
std::map<std::string, std::string> shared_gpu_rank_env(int rank, int gpus, std::string_view visible_list);

// In a rank process: when kSharedGpusVar is set and the rank is known (kRankEnvVars), sets the
// variables above in this process's environment. Returns how many it set. Must run before anything
// reads them (CUDA initialisation, the interpreter copying the environment): the preload calls it from
// a constructor.
int apply_shared_gpu_env_from_environment();

}  // namespace ncclfi
