// Every environment variable ncclfi reads, in one place, read once. The rank processes read them;
// the harness sets them for the ranks only.
#pragma once

#include <array>
#include <functional>
#include <string>
#include <vector>

namespace ncclfi {

struct Params {
  std::string plan_path;    // NCCLFI_PLAN: the fault plan (JSON). Unset: inert.
  std::string events_path;  // NCCLFI_EVENTS: the event log (JSON lines). Unset: no events.
  std::string run_dir;      // NCCLFI_RUN_DIR: where control FIFOs go (default: the plan's folder).
  int rank = -1;            // NCCLFI_RANK, then RANK, OMPI_COMM_WORLD_RANK, SLURM_PROCID, PMI_RANK
  int world_size = -1;  // NCCLFI_WORLD_SIZE, then WORLD_SIZE, OMPI_COMM_WORLD_SIZE, SLURM_NTASKS, PMI_SIZE
  int attempt = 0;      // NCCLFI_ATTEMPT: restart attempt number, set by the harness (0 first)
  // LOCAL_RANK, then OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID: the rank's index on its node (its GPU
  // and its HCA there); -1 when no launcher says.
  int local_rank = -1;
  // NCCLFI_NODE_RANKS ("0,1"): the ranks on this rank's node, set by the harness where ranks name their
  // nodes. Connections to them stay inside the node (NVLink, PCIe), off the NIC. Empty: not known.
  std::vector<int> node_ranks;
  bool log = false;        // NCCLFI_LOG=1: one-line `ncclfi[rank pid]` records on stderr
  bool trace_ops = false;  // NCCLFI_TRACE_OPS=1: preload writes op_enqueue events
  bool time_ops = false;   // NCCLFI_TIME_OPS=1: preload writes op_time events (enqueue to completion)
  // NCCLFI_RECORD_NCCL_ENV=1: the preload writes the NCCL_* variables libnccl looked up (nccl_env_read)
  bool record_nccl_env = false;
  // NCCLFI_QUIET=1 (training labs): nothing on a rank's stderr or in NCCL's log names the plan, a fault
  // or an injection; the events file (the instructor's) still records every injection. Wins over
  // NCCLFI_LOG.
  bool quiet = false;
  std::string net_inner;              // NCCLFI_NET_INNER: wrap this net plugin (name or path)
  int net_nsocks = -1;                // NCCLFI_NET_NSOCKS: data sockets per connection (striping); -1: by
                                      // who moves the bytes (the shim's default_nsocks)
  int net_nthreads = 2;               // NCCLFI_NET_NTHREADS: helper threads per connection
  std::string net_progress = "auto";  // NCCLFI_NET_PROGRESS: auto, caller or helpers (who moves the bytes)
  int net_speed_mbps = 100000;        // NCCLFI_NET_SPEED_MBPS: speed reported to NCCL
  int net_inline_bytes = 128;         // NCCLFI_NET_INLINE: payloads this small ride with the size header
  size_t net_min_chunk = 65536;       // NCCLFI_NET_MIN_CHUNK: smallest stripe slice
  int net_hello_timeout_ms = 20000;   // NCCLFI_NET_HELLO_TIMEOUT_MS: a silent accepted socket is closed then
  std::string cuda_driver_lib = "libcuda.so.1";  // NCCLFI_CUDA_DRIVER_LIB: the preload's CUDA driver (tests
                                                 // name a host-memory stand-in)
  std::string ibverbs_real;  // NCCLFI_IBVERBS_REAL: the libibverbs libncclfi-ibverbs.so forwards to (a path;
                             // default: the one found at build time; the tests name the stand-in)

  // Reads the environment (once per process; later calls return the cached copy).
  static const Params& get();
  // Reads the environment now (tests).
  static Params from_env();
};

// The variables that name a process's rank, the first one set winning: NCCLFI_RANK (ncclfi's own
// launcher), RANK (torchrun), OMPI_COMM_WORLD_RANK (mpirun), SLURM_PROCID (srun; last but one because
// every process of an allocation inherits SLURM_PROCID=0), PMI_RANK. The harness reads the same list
// from /proc to find the process that is rank R.
inline constexpr std::array<const char*, 5> kRankEnvVars = {"NCCLFI_RANK", "RANK", "OMPI_COMM_WORLD_RANK",
                                                            "SLURM_PROCID", "PMI_RANK"};

// The variable that, with NCCLFI_HARNESS_ID, marks a process as one of the job's ranks when the harness
// looks for them in /proc: the launchers set it for every rank and never for a launcher process, which
// may carry a rank variable of its own (a torchrun under mpirun has OMPI_COMM_WORLD_RANK, every process
// of a Slurm allocation SLURM_PROCID).
inline constexpr const char* kRankMarkerVar = "NCCLFI_WORLD_SIZE";

// Rank from kRankEnvVars (first set wins), or -1.
int resolve_rank_from_env();
// The same rule over variables read through `lookup` (a name's value, or nullptr when unset): the first
// of kRankEnvVars that holds a whole number in [0, INT_MAX] names the rank; an empty or malformed one
// is passed over. The harness reads other processes' environments (/proc) with it, so it finds a rank
// under the number the rank itself uses.
int resolve_rank(const std::function<const char*(const char* name)>& lookup);
int resolve_world_size_from_env();

}  // namespace ncclfi
