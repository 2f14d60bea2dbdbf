// What a launcher starts for one attempt, as data: the processes (argv, environment, log file) of a
// scenario's job, built from the scenario and the attempt's context without starting anything (the run
// library spawns them). Each launcher is a file in this folder (launcher_spec.h lists them).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent_env.h"
#include "gpu_placement.h"
#include "scenario.h"

namespace ncclfi::cli {

// One process of a job (a rank, or a launcher such as mpirun/torchrun serving every rank).
struct ProcessSpec {
  int rank = -1;                           // -1: one process serving every rank (mpirun, torchrun)
  std::vector<std::string> argv;           // argv[0] is searched on PATH when it has no '/'
  std::map<std::string, std::string> env;  // the complete environment of the process
  std::string log_path;                    // stdout and stderr, together, truncated first
  std::string cwd;                         // empty: ncclfi's
  std::string slurm_job_name;              // srun: the job's --job-name, scancelled if ncclfi dies
  // The `cgroup.procs` file of the attempt's cgroup (run_cgroup.h), or empty. The child enters it
  // itself before exec, so nothing it starts can be forked outside it.
  std::string cgroup_procs;
  // The node's host name (scenario `launcher.hostnames`), or empty. The child gets a UTS namespace of its
  // own with that name before exec (inside a user namespace of its own when it is not root), so that
  // gethostname(), and NCCL's log prefix with it, names the node (rank_process_boost.cc).
  std::string hostname;
};

// Where ncclfi's own files are. One layout for the build tree and an installed tree: PREFIX/bin (ncclfi
// and the workloads), PREFIX/lib/ncclfi installed or PREFIX/lib in a build tree (the preload, the net
// shim, the verbs wrapper: ncclfi::private_lib_dir), PREFIX/share/ncclfi (workloads/torch, scenarios).
// The build copies share/ncclfi into build/ too, so a copied build/ is a PREFIX.
struct Installation {
  std::string bin_dir, lib_dir, data_dir;
  // PREFIX is two levels above /proc/self/exe (PREFIX/bin/ncclfi). NCCLFI_BUILD_DIR overrides PREFIX and
  // NCCLFI_DATA_DIR overrides PREFIX/share/ncclfi (docs/environment.md lists them).
  static Installation discover();
  // The same, for an executable at `exe` and an environment read through `getenv`.
  static Installation for_executable(const std::string& exe, const char* (*getenv)(const char*));
};

struct LaunchContext {
  const Scenario* scenario = nullptr;
  Installation install;
  int attempt = 0;
  bool inject = true;                  // faults armed on this attempt (false: baseline, clean attempts)
  std::string run_dir;                 // absolute: NCCLFI_RUN_DIR, control FIFOs
  std::string log_dir;                 // absolute: where this attempt's logs go
  std::string plan_path, events_path;  // absolute
  int master_port = 29500;
  std::string harness_id;  // NCCLFI_HARNESS_ID for every process of the job
  std::string job_key;     // NCCLFI_JOB_KEY: drawn per attempt, the workloads' rendezvous checks it
  std::map<std::string, std::string> parent_env;  // ncclfi's own environment
  GpuPlacement gpu;                               // shared: each rank a host of its own on a shared GPU
  std::map<std::string, std::string> mps_env;     // the job's MPS daemon (shared mode), for every process
  // Node agents (scenario launcher.nodes, mpirun and srun): where they dial, the drill's secret (their
  // environment only), and the node-local directory where each node's ranks write their events and
  // open their control FIFOs. Empty: one host, the run directory.
  std::string agent_addr, agent_secret, agent_spool;
  std::optional<std::string> allowed_hosts;  // NCCLFI_ALLOWED_HOSTS for the ranks (host_allow.h)
  // The injection channel's socket and key (ncclfi/injection_channel.h): in the environment of every
  // process of the job, never in argv. Empty: no channel here (with node agents, each node's agent
  // gives its ranks its own: kInjectFromAgentVar).
  std::map<std::string, std::string> inject_channel_env;
  // Quiet mode, every rank on this host: a directory whose libnccl-net.so is the net shim, searched first
  // instead of NCCL_NET_PLUGIN (quiet_net_plugin.h). Empty: NCCL_NET_PLUGIN names the shim.
  std::string net_plugin_dir;
};

class RankLauncher {
 public:
  virtual ~RankLauncher() = default;
  virtual std::vector<ProcessSpec> processes(const LaunchContext& ctx) const = 0;
  // The output prefix a launcher process puts on each rank's lines ("[1,3]<stderr>:" for Open MPI,
  // "[rank3]:" for torchrun), parsed so lines count for their rank. -1: not a rank line.
  virtual int rank_of_line(const std::string& /*line*/) const { return -1; }
  // The process that starts one `ncclfi agent` per node (ctx.agent_addr set), or nullopt for a launcher
  // that cannot place one per node.
  virtual std::optional<ProcessSpec> agent_process(const LaunchContext& /*ctx*/) const {
    return std::nullopt;
  }
  // As the node launcher of torchrun across nodes: the process that starts, on each of the job's nodes,
  // the command appended to its argv (`node_args` are the node launcher's own arguments). nullopt for a
  // launcher that cannot place one process per node.
  virtual std::optional<ProcessSpec> one_per_node(const LaunchContext& /*ctx*/,
                                                  const std::vector<std::string>& /*node_args*/) const {
    return std::nullopt;
  }
};

// The injection variables and the workload's argv, shared by every launcher.
// Whether the ranks run under NCCLFI_QUIET: a drill (tag "drill"), a lab (`ncclfi lab start` sets it in
// its own environment) or a scenario whose env asks.
bool ranks_run_quiet(const LaunchContext& ctx);
bool ranks_run_quiet(const Scenario& s, const std::map<std::string, std::string>& parent_env);
// Whether the job has an injector in its processes (the api, net or verbs layer): only then do its
// ranks get the injection channel's key. Proc and link faults are the harness's own.
bool job_has_injector(const Scenario& s);
// The injection variables a rank gets (no RANK/WORLD_SIZE rendezvous variables): NCCLFI_*, the
// scenario's env, LD_PRELOAD and NCCL_NET_PLUGIN per the scenario's layers. In shared-GPU mode also the
// variables that make the rank a host of its own (ncclfi/shared_gpu.h): set here for a known rank;
// for rank -1 (a launcher starts the ranks) NCCLFI_SHARED_GPUS and the preload, which applies them in
// each rank before its main.
std::map<std::string, std::string> injection_env(const LaunchContext& ctx, int rank);
// The workload's argv with {rank}, {world_size}, {attempt}, {run_dir}, {bin_dir}, {lib_dir},
// {data_dir}, {master_port} and {env:NAME} replaced (rank -1 leaves {rank} as 0).
std::vector<std::string> workload_argv(const LaunchContext& ctx, int rank);
std::string substitute_placeholders(const std::string& text, const LaunchContext& ctx, int rank);

}  // namespace ncclfi::cli
