// Shared-GPU mode: several NCCL ranks on one GPU. NCCL refuses two ranks of one host on one GPU, but
// each rank that names its own host (NCCL_HOSTID) is, to NCCL, alone on its node: the ranks then reach
// each other over the network path (NCCL's Socket transport or the ncclfi shim), as ranks on
// different nodes do. This file decides what makes a rank such a host of its own; the harness applies
// it to the ranks it starts itself, and the preload applies it (before the program's main) to the
// ranks a launcher such as torchrun or mpirun starts.
#pragma once

#include <functional>
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

// ncclfi's MPS daemons in shared-GPU mode: one per generation of the job's processes. A client killed in
// the middle of GPU work leaves its MPS server an error that the next client to connect takes
// (docs/failure-signatures.md, section 8), so the workers a launcher restarts inside the job (torchrun's
// --max-restarts, a requeued Slurm job) go to a daemon that none of the killed ones used. The harness
// starts kMpsGenerationsVar daemons, generation N's on mps_pipe_dir(base, N, ...); a generation past
// them runs without MPS (time-sliced), which a poisoned server does not disturb.
inline constexpr const char* kMpsPipeBaseVar = "NCCLFI_MPS_PIPE_BASE";
inline constexpr const char* kMpsGenerationsVar = "NCCLFI_MPS_GENERATIONS";
inline constexpr int kMaxMpsGenerations = 8;  // control daemons are cheap; a server starts with a client

using EnvLookup = std::function<const char*(const char*)>;

// The generation of this process: how many times a launcher restarted the job inside it.
// TORCHELASTIC_RESTART_COUNT (torchrun's workers), else SLURM_RESTART_COUNT (a requeued Slurm job), else 0;
// a value that is not a small non-negative integer counts as 0.
int launcher_restart_count(const EnvLookup& env);

// Generation `generation`'s pipe directory under `base`: base/gN while N < generations, else
// base/time-sliced (a directory without a daemon: its clients run without MPS).
std::string mps_pipe_dir(std::string_view base, int generation, int generations);

// In a process of the job: when kMpsPipeBaseVar is set, points CUDA_MPS_PIPE_DIRECTORY at this
// generation's daemon. Returns true when it set it. Like the variables above, it must run before CUDA
// initialises: the preload calls it from its constructor.
bool apply_mps_generation_from_environment();

}  // namespace ncclfi
