// The four launchers and the environment they give the ranks.
#include "rank_launcher.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <filesystem>

#include "agent_protocol.h"
#include "ncclfi/event_log.h"
#include "ncclfi/shared_gpu.h"

extern char** environ;

#include "line_regex.h"

namespace ncclfi::cli {
namespace fs = std::filesystem;

namespace {

std::string rank_log_name(const LaunchContext& ctx, int rank) {
  return ctx.log_dir + "/" + (rank < 0 ? std::string("launcher") : "rank-" + std::to_string(rank)) + ".log";
}

// Environment every process of the job gets: ncclfi's, plus the harness id the orphan guard
// recognises (the launcher process too, so its children are found if it dies).
std::map<std::string, std::string> base_env(const LaunchContext& ctx) {
  auto env = ctx.parent_env;
  env["NCCLFI_HARNESS_ID"] = ctx.harness_id;
  for (const auto& [k, v] : ctx.mps_env) env[k] = v;
  return env;
}

void add_rendezvous(std::map<std::string, std::string>& env, const LaunchContext& ctx, int rank) {
  env["RANK"] = std::to_string(rank);
  env["WORLD_SIZE"] = std::to_string(ctx.scenario->workload.ranks);
  env["LOCAL_RANK"] = std::to_string(rank);
  env["LOCAL_WORLD_SIZE"] = std::to_string(ctx.scenario->workload.ranks);
  env["MASTER_ADDR"] = "127.0.0.1";
  env["MASTER_PORT"] = std::to_string(ctx.master_port);
}

// The one process of a launcher that serves every rank (mpirun, srun, torchrun): ncclfi's environment
// (never the injection variables), its output, every rank's lines together, in launcher.log.
ProcessSpec launcher_process(const LaunchContext& ctx) {
  ProcessSpec spec;
  spec.rank = -1;
  spec.env = base_env(ctx);
  spec.log_path = rank_log_name(ctx, -1);
  return spec;
}

// The process that starts the node agents: ncclfi's environment plus the agents' variables (the secret
// among them: in the environment, never in argv), its output in agents.log.
ProcessSpec agent_launcher_process(const LaunchContext& ctx) {
  ProcessSpec spec = launcher_process(ctx);
  spec.env[kAgentAddrVar] = ctx.agent_addr;
  spec.env[kAgentSecretVar] = ctx.agent_secret;
  spec.env[kAgentSpoolVar] = ctx.agent_spool;
  // The drill's allow-list: each agent checks its own host against it before any fault (cmd_agent.cc).
  if (ctx.allowed_hosts) spec.env["NCCLFI_ALLOWED_HOSTS"] = *ctx.allowed_hosts;
  spec.log_path = ctx.log_dir + "/agents.log";
  return spec;
}

// Rank 0's address when the scenario's env names none: loopback on one host; this host's name when the
// job spans nodes (rank 0 runs where the launcher runs: the first host of a hostfile or allocation).
std::string default_master_addr(const LaunchContext& ctx) {
  return ctx.scenario->launcher.nodes > 1 ? host_name() : "127.0.0.1";
}

// Arguments of the scenario, placeholders replaced ({env:NAME} names a hostfile, for one).
std::vector<std::string> substituted(const std::vector<std::string>& args, const LaunchContext& ctx) {
  std::vector<std::string> out;
  for (const auto& a : args) out.push_back(substitute_placeholders(a, ctx, -1));
  return out;
}

// The launcher's extra arguments.
std::vector<std::string> extra_args(const LaunchContext& ctx) {
  return substituted(ctx.scenario->launcher.extra_args, ctx);
}

// One `ncclfi agent` per node through mpirun (--map-by ppr:1:node) with `args` (the job's --hostfile).
// The secret is forwarded by name (-x NAME): its value stays off every command line.
ProcessSpec mpirun_agents(const LaunchContext& ctx, const std::vector<std::string>& args) {
  ProcessSpec spec = agent_launcher_process(ctx);
  spec.argv = {"mpirun",
               "--allow-run-as-root",
               "--oversubscribe",
               "--tag-output",
               "--map-by",
               "ppr:1:node",
               "-np",
               std::to_string(ctx.scenario->launcher.nodes)};
  for (const char* name : {kAgentAddrVar, kAgentSecretVar, kAgentSpoolVar, "NCCLFI_HARNESS_ID"}) {
    spec.argv.push_back("-x");
    spec.argv.push_back(name);
  }
  if (ctx.allowed_hosts) {
    spec.argv.push_back("-x");
    spec.argv.push_back("NCCLFI_ALLOWED_HOSTS");
  }
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.argv.push_back(ctx.install.bin_dir + "/ncclfi");
  spec.argv.push_back("agent");
  return spec;
}

// One `ncclfi agent` per node of the job's nodes through srun (a job step of its own,
// --ntasks-per-node=1); srun hands its own environment, the secret included, to its tasks.
ProcessSpec srun_agents(const LaunchContext& ctx, const std::vector<std::string>& args) {
  const Scenario& s = *ctx.scenario;
  ProcessSpec spec = agent_launcher_process(ctx);
  spec.slurm_job_name = "ncclfi-" + s.name + "-" + ctx.harness_id + "-agents";
  spec.argv = {"srun",    "--nodes=" + std::to_string(s.launcher.nodes), "--ntasks-per-node=1",
               "--label", "--job-name=" + spec.slurm_job_name,           "--kill-on-bad-exit=0"};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.argv.push_back(ctx.install.bin_dir + "/ncclfi");
  spec.argv.push_back("agent");
  return spec;
}

// The injection variables that a launcher hands to all its ranks at once: each rank takes its own rank
// from the launcher's variables (OMPI_COMM_WORLD_RANK, SLURM_PROCID, torchrun's RANK), not NCCLFI_RANK.
std::map<std::string, std::string> injection_env_for_all_ranks(const LaunchContext& ctx) {
  auto vars = injection_env(ctx, -1);
  vars.erase("NCCLFI_RANK");
  return vars;
}

// `env K=V ... PROGRAM ARGS`: how srun and torchrun pass variables to their ranks and not to themselves.
void append_env_command(std::vector<std::string>& argv, const std::map<std::string, std::string>& vars,
                        const LaunchContext& ctx) {
  argv.push_back("env");
  for (const auto& [k, v] : vars) argv.push_back(k + "=" + v);
  for (const auto& a : workload_argv(ctx, -1)) argv.push_back(a);
}

// The rank a launcher's line prefix names (its first capture group), or -1.
// A number too large for an int is no rank.
int rank_from_prefix(const std::string& line, const harness::LineRegex& prefix) {
  std::string digits;
  if (!prefix.search(line, &digits)) return -1;
  int rank = -1;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), rank);
  return ec == std::errc() && end == digits.data() + digits.size() ? rank : -1;
}

// local: one process per rank, torchrun-style rendezvous variables.
class LocalLauncher : public RankLauncher {
 public:
  std::vector<ProcessSpec> processes(const LaunchContext& ctx) const override {
    std::vector<ProcessSpec> specs;
    const int world = ctx.scenario->workload.ranks;
    const bool per_rank =
        ctx.scenario->launcher.kind != LauncherKind::kCommand || ctx.scenario->launcher.per_rank;
    for (int r = 0; r < (per_rank ? world : 1); ++r) {
      const int rank = per_rank ? r : -1;
      ProcessSpec spec;
      spec.rank = rank;
      spec.argv = workload_argv(ctx, rank);
      spec.env = base_env(ctx);
      if (rank >= 0) add_rendezvous(spec.env, ctx, rank);
      for (auto& [k, v] : injection_env(ctx, rank)) spec.env[k] = v;
      spec.log_path = rank_log_name(ctx, rank);
      specs.push_back(std::move(spec));
    }
    return specs;
  }
};

// mpirun (Open MPI 4.1): one mpirun process; variables forwarded with -x (LD_PRELOAD there, never in
// mpirun's own environment); --tag-output prefixes each line with [jobid,rank]<stream>:.
class MpirunLauncher : public RankLauncher {
 public:
  std::vector<ProcessSpec> processes(const LaunchContext& ctx) const override {
    ProcessSpec spec = launcher_process(ctx);
    const int world = ctx.scenario->workload.ranks;
    spec.argv = {"mpirun", "--allow-run-as-root", "--oversubscribe", "--tag-output",
                 "-np",    std::to_string(world)};
    auto vars = injection_env_for_all_ranks(ctx);
    if (!vars.count("MASTER_ADDR")) vars["MASTER_ADDR"] = default_master_addr(ctx);  // the scenario's wins
    vars["MASTER_PORT"] = std::to_string(ctx.master_port);
    vars["NCCLFI_HARNESS_ID"] = ctx.harness_id;
    for (const auto& [k, v] : vars) {
      spec.argv.push_back("-x");
      spec.argv.push_back(k + "=" + v);
    }
    for (const auto& a : extra_args(ctx)) spec.argv.push_back(a);
    for (const auto& a : workload_argv(ctx, -1)) spec.argv.push_back(a);
    return {spec};
  }
  // One agent per node of the hostfile, the same extra arguments as the job (its --hostfile).
  std::optional<ProcessSpec> agent_process(const LaunchContext& ctx) const override {
    return mpirun_agents(ctx, extra_args(ctx));
  }
  int rank_of_line(const std::string& line) const override {
    static const harness::LineRegex prefix(R"(^\[\d+,(\d+)\]<(stdout|stderr)>:)");
    return rank_from_prefix(line, prefix);
  }
};

// srun (Slurm): one srun process for the job step; Slurm's daemons start the tasks, so they are not our
// children: proc faults and the final sweep find them by NCCLFI_HARNESS_ID and SLURM_PROCID in their
// environment. The injection variables reach the tasks only, through `env K=V... program` (srun itself
// propagates its own environment, which must stay free of LD_PRELOAD). --label prefixes each line with
// "R: ". No --kill-on-bad-exit: a rank that dies must leave its peers running, so that their own
// watchdogs are what is judged. MASTER_ADDR: the scenario's env, else the workloads fall back to
// SLURM_LAUNCH_NODE_IPADDR (right on one node; set MASTER_ADDR to rank 0's host on several).
class SrunLauncher : public RankLauncher {
 public:
  std::vector<ProcessSpec> processes(const LaunchContext& ctx) const override {
    const Scenario& s = *ctx.scenario;
    ProcessSpec spec = launcher_process(ctx);
    // A job name unique to this ncclfi process, so the orphan guard can scancel exactly this job.
    spec.slurm_job_name = "ncclfi-" + s.name + "-" + ctx.harness_id;
    spec.argv = {"srun", "--ntasks=" + std::to_string(s.workload.ranks), "--label",
                 "--job-name=" + spec.slurm_job_name, "--kill-on-bad-exit=0"};
    if (s.launcher.nodes > 0) spec.argv.push_back("--nodes=" + std::to_string(s.launcher.nodes));
    for (const auto& a : extra_args(ctx)) spec.argv.push_back(a);
    auto vars = injection_env_for_all_ranks(ctx);
    vars["MASTER_PORT"] = std::to_string(ctx.master_port);
    vars["NCCLFI_HARNESS_ID"] = ctx.harness_id;
    append_env_command(spec.argv, vars, ctx);
    return {spec};
  }
  // One agent per node of the job's nodes, the same extra arguments as the job.
  std::optional<ProcessSpec> agent_process(const LaunchContext& ctx) const override {
    return srun_agents(ctx, extra_args(ctx));
  }
  int rank_of_line(const std::string& line) const override {
    static const harness::LineRegex prefix(R"(^\s*(\d+): )");
    return rank_from_prefix(line, prefix);
  }
};

// torchrun: one torchrun per node (this host's alone without a node launcher) that starts and restarts
// that node's workers. The injection variables reach the workers only, through
// `--no_python env K=V... PROGRAM ARGS`. Options are spelled with underscores: PyTorch 2.x takes both
// spellings, 1.13 (Debian's python3-torch) only these.
//
// Across nodes (launcher.node_launcher), mpirun (--map-by ppr:1:node) or srun (--ntasks-per-node=1)
// starts one torchrun per node with a c10d rendezvous on MASTER_ADDR:PORT (the scenario's MASTER_ADDR,
// else this host's name: ncclfi runs on the first node), and one node agent per node the same way. Each
// worker runs under `ncclfi agent --exec`, so its fate is recorded on its own host and proc faults hit
// the program. torchrun itself runs without NCCLFI_HARNESS_ID (`env -u`): it carries the node
// launcher's rank variable (OMPI_COMM_WORLD_RANK, SLURM_PROCID), and the id is what makes a process
// with a rank variable one of the job's ranks. If ncclfi dies, the agents end the workers, and each
// torchrun ends with mpirun or its node's orted (setpriv --pdeathsig: mpirun's process group is the
// orphan guard's) or with the srun step (scancelled by its name).
class TorchrunLauncher : public RankLauncher {
 public:
  std::vector<ProcessSpec> processes(const LaunchContext& ctx) const override {
    const Scenario& s = *ctx.scenario;
    ProcessSpec spec = launcher_process(ctx);
    const auto node_launcher = s.launcher.node_launcher;
    const std::string nodes = std::to_string(s.launcher.nodes);
    const auto node_args = substituted(s.launcher.node_launcher_args, ctx);
    if (node_launcher == LauncherKind::kMpirun) {
      // No --tag-output: its prefix would name the node's torchrun, not the rank of the line.
      spec.argv = {"mpirun", "--allow-run-as-root", "--oversubscribe", "--map-by", "ppr:1:node", "-np",
                   nodes};
    } else if (node_launcher == LauncherKind::kSrun) {
      spec.slurm_job_name = "ncclfi-" + s.name + "-" + ctx.harness_id;  // scancelled if ncclfi dies
      spec.argv = {"srun", "--nodes=" + nodes, "--ntasks-per-node=1", "--job-name=" + spec.slurm_job_name,
                   "--kill-on-bad-exit=0"};
    }
    if (node_launcher) {
      spec.argv.insert(spec.argv.end(), node_args.begin(), node_args.end());
      spec.argv.insert(spec.argv.end(), {"env", "-u", "NCCLFI_HARNESS_ID"});
    }
    // A torchrun whose workers died waits in the c10d rendezvous inside a C++ call, where Python runs no
    // signal handler: mpirun's SIGTERM and its daemons' exit left it running. It dies with its parent
    // (mpirun, or the node's orted) instead. (A srun step's processes are killed by slurmstepd.)
    if (node_launcher == LauncherKind::kMpirun)
      spec.argv.insert(spec.argv.end(), {"setpriv", "--pdeathsig", "KILL"});
    for (auto& a : torchrun_argv(ctx)) spec.argv.push_back(std::move(a));
    return {spec};
  }
  std::optional<ProcessSpec> agent_process(const LaunchContext& ctx) const override {
    const auto& l = ctx.scenario->launcher;
    if (l.node_launcher == LauncherKind::kMpirun)
      return mpirun_agents(ctx, substituted(l.node_launcher_args, ctx));
    if (l.node_launcher == LauncherKind::kSrun)
      return srun_agents(ctx, substituted(l.node_launcher_args, ctx));
    return std::nullopt;
  }
  int rank_of_line(const std::string& line) const override {
    static const harness::LineRegex prefix(R"(^\[(?:default)?rank(\d+)\]:)");
    return rank_from_prefix(line, prefix);
  }

 private:
  // `torchrun ... --no_python env VARS... PROGRAM ARGS`, the same command on every node.
  static std::vector<std::string> torchrun_argv(const LaunchContext& ctx) {
    const Scenario& s = *ctx.scenario;
    const int nodes = std::max(1, s.launcher.nodes);
    const auto addr = s.env.find("MASTER_ADDR");
    const std::string master = addr != s.env.end() ? addr->second : default_master_addr(ctx);
    const std::string port = std::to_string(ctx.master_port);
    std::vector<std::string> argv = {"torchrun", "--nnodes=" + std::to_string(nodes),
                                     "--nproc_per_node=" + std::to_string(s.workload.ranks / nodes),
                                     "--max_restarts=" + std::to_string(s.launcher.max_restarts)};
    if (s.launcher.node_launcher) {
      argv.push_back("--rdzv_backend=c10d");  // the store on MASTER_ADDR's torchrun; the others dial it
      argv.push_back("--rdzv_endpoint=" + master + ":" + port);
      argv.push_back("--rdzv_id=" + ctx.harness_id);
    } else {
      argv.push_back("--master_addr=" + master);
      argv.push_back("--master_port=" + port);
    }
    argv.push_back("--no_python");
    for (const auto& a : extra_args(ctx)) argv.push_back(a);
    auto vars = injection_env_for_all_ranks(ctx);
    // torchrun gives its workers MASTER_ADDR and MASTER_PORT (rank 0's host and a port it picked); the
    // scenario's MASTER_ADDR names the rendezvous endpoint.
    vars.erase("MASTER_ADDR");
    vars.erase("MASTER_PORT");
    if (s.launcher.node_launcher) vars["NCCLFI_HARNESS_ID"] = ctx.harness_id;  // not torchrun's (above)
    append_env_command(argv, vars, ctx);
    return argv;
  }
};

}  // namespace

Installation Installation::for_executable(const std::string& exe, const char* (*getenv)(const char*)) {
  auto var = [getenv](const char* name) -> std::string {
    const char* v = getenv(name);
    return v != nullptr ? v : "";
  };
  fs::path prefix = fs::path(exe).parent_path().parent_path();
  if (const auto p = var("NCCLFI_BUILD_DIR"); !p.empty()) prefix = p;
  Installation inst;
  inst.bin_dir = (prefix / "bin").string();
  inst.lib_dir = (prefix / "lib").string();
  inst.data_dir = (prefix / "share" / "ncclfi").string();
  if (const auto d = var("NCCLFI_DATA_DIR"); !d.empty()) inst.data_dir = d;
  return inst;
}

Installation Installation::discover() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return for_executable(ec ? std::string() : exe.string(),
                        [](const char* name) -> const char* { return std::getenv(name); });
}

std::map<std::string, std::string> current_environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string var = *e;
    const auto eq = var.find('=');
    if (eq != std::string::npos) env[var.substr(0, eq)] = var.substr(eq + 1);
  }
  return env;
}

bool is_reserved_env(std::string_view name) {
  return name.rfind("NCCLFI_", 0) == 0 || name == "LD_PRELOAD" || name == "NCCL_NET_PLUGIN" ||
         name == "NCCL_IBVERBS_LIB";
}

namespace {

void add_shared_gpu_env(std::map<std::string, std::string>& env, const LaunchContext& ctx, int rank) {
  // The GPUs to share: the scenario's CUDA_VISIBLE_DEVICES, else ncclfi's own, else 0..gpus-1.
  std::string visible;
  if (const auto it = ctx.scenario->env.find("CUDA_VISIBLE_DEVICES"); it != ctx.scenario->env.end()) {
    visible = it->second;
  } else if (const auto own = ctx.parent_env.find("CUDA_VISIBLE_DEVICES"); own != ctx.parent_env.end()) {
    visible = own->second;
  }
  if (rank >= 0) {
    for (const auto& [k, v] : shared_gpu_rank_env(rank, ctx.gpu.gpus, visible)) env[k] = v;
    return;
  }
  env[kSharedGpusVar] = std::to_string(ctx.gpu.gpus);
  env[kSharedGpuListVar] = visible;
  if (!ctx.scenario->layer_api && !ctx.scenario->time_ops) {  // inert without a plan: only the variables
    env["LD_PRELOAD"] = ctx.install.lib_dir + "/libncclfi-preload.so";
  }
}

}  // namespace

std::map<std::string, std::string> injection_env(const LaunchContext& ctx, int rank) {
  const Scenario& s = *ctx.scenario;
  std::map<std::string, std::string> env = s.env;
  if (ctx.inject && !s.plan.faults.empty()) env["NCCLFI_PLAN"] = ctx.plan_path;
  // With node agents, each node's ranks write their events and open their control FIFOs in the node's
  // spool directory, which its agent reads: no file is shared between hosts.
  env["NCCLFI_EVENTS"] = ctx.agent_spool.empty() ? ctx.events_path : ctx.agent_spool + "/events.jsonl";
  env["NCCLFI_RUN_DIR"] = ctx.agent_spool.empty() ? ctx.run_dir : ctx.agent_spool;
  // ... and `ncclfi agent --exec` keeps a copy of the rank's output there (rank_output_tail.h).
  if (!ctx.agent_spool.empty()) env[kAgentSpoolVar] = ctx.agent_spool;
  env["NCCLFI_ATTEMPT"] = std::to_string(ctx.attempt);
  if (!ctx.job_key.empty()) env["NCCLFI_JOB_KEY"] = ctx.job_key;
  env["NCCLFI_WORLD_SIZE"] = std::to_string(s.workload.ranks);
  if (rank >= 0) env["NCCLFI_RANK"] = std::to_string(rank);
  // The drill's allow-list travels with the ranks (no shared file needed on other hosts).
  if (ctx.allowed_hosts) env["NCCLFI_ALLOWED_HOSTS"] = *ctx.allowed_hosts;
  if (s.layer_api || s.time_ops) {
    env["LD_PRELOAD"] = ctx.install.lib_dir + "/libncclfi-preload.so";  // a scenario's env may not set it
  }
  if (s.time_ops) env["NCCLFI_TIME_OPS"] = "1";
  if (s.layer_net) {
    env["NCCL_NET_PLUGIN"] = ctx.install.lib_dir + "/libnccl-net-ncclfi.so";
    if (!s.env.count("NCCL_NET")) env["NCCL_NET"] = "ncclfi";
    if (!s.net_wrap.empty()) env["NCCLFI_NET_INNER"] = s.net_wrap;  // travels with -x / env like the rest
  }
  if (s.layer_verbs) {
    // NCCL 2.30.3 and later dlopen NCCL_IBVERBS_LIB; older ones dlopen libibverbs.so.1, which lib/ibverbs/
    // (first on LD_LIBRARY_PATH) answers with the same wrapper.
    env["NCCL_IBVERBS_LIB"] = ctx.install.lib_dir + "/libncclfi-ibverbs.so";
    std::string inherited;
    if (const auto it = s.env.find("LD_LIBRARY_PATH"); it != s.env.end()) {
      inherited = it->second;
    } else if (const auto own = ctx.parent_env.find("LD_LIBRARY_PATH"); own != ctx.parent_env.end()) {
      inherited = own->second;
    }
    env["LD_LIBRARY_PATH"] = ctx.install.lib_dir + "/ibverbs" + (inherited.empty() ? "" : ":" + inherited);
  }
  if (ctx.gpu.shared) add_shared_gpu_env(env, ctx, rank);
  return env;
}

std::string substitute_placeholders(const std::string& text, const LaunchContext& ctx, int rank) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    const size_t open = text.find('{', i);
    if (open == std::string::npos) break;
    const size_t close = text.find('}', open);
    if (close == std::string::npos) break;
    out += text.substr(i, open - i);
    const std::string key = text.substr(open + 1, close - open - 1);
    std::string value;
    bool known = true;
    if (key == "rank")
      value = std::to_string(rank < 0 ? 0 : rank);
    else if (key == "world_size")
      value = std::to_string(ctx.scenario->workload.ranks);
    else if (key == "attempt")
      value = std::to_string(ctx.attempt);
    else if (key == "run_dir")
      value = ctx.run_dir;
    else if (key == "bin_dir")
      value = ctx.install.bin_dir;
    else if (key == "lib_dir")
      value = ctx.install.lib_dir;
    else if (key == "data_dir")
      value = ctx.install.data_dir;
    else if (key == "master_port")
      value = std::to_string(ctx.master_port);
    else if (key.rfind("env:", 0) == 0) {
      const auto it = ctx.parent_env.find(key.substr(4));
      value = it == ctx.parent_env.end() ? "" : it->second;
    } else {
      known = false;
    }
    out += known ? value : text.substr(open, close - open + 1);
    i = close + 1;
  }
  out += text.substr(i);
  return out;
}

std::vector<std::string> workload_argv(const LaunchContext& ctx, int rank) {
  const WorkloadSpec& w = ctx.scenario->workload;
  std::vector<std::string> argv;
  // With node agents each rank runs under `ncclfi agent --exec`, which records how it ended.
  if (!ctx.agent_spool.empty()) argv = {ctx.install.bin_dir + "/ncclfi", "agent", "--exec", "--"};
  if (w.builtin == "cpu-ring") {
    argv.push_back(ctx.install.bin_dir + "/ncclfi-cpu-ring");
  } else if (w.builtin == "nccl-workload") {
    argv.push_back(ctx.install.bin_dir + "/ncclfi-workload");
  } else {
    argv.insert(argv.end(), w.command.begin(), w.command.end());
  }
  for (const auto& a : w.args) argv.push_back(a);
  for (auto& a : argv) a = substitute_placeholders(a, ctx, rank);
  return argv;
}

int pick_free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 29500;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  int port = 29500;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

std::unique_ptr<RankLauncher> make_launcher(LauncherKind kind) {
  switch (kind) {
    case LauncherKind::kMpirun:
      return std::make_unique<MpirunLauncher>();
    case LauncherKind::kSrun:
      return std::make_unique<SrunLauncher>();
    case LauncherKind::kTorchrun:
      return std::make_unique<TorchrunLauncher>();
    case LauncherKind::kLocal:
    case LauncherKind::kCommand:
      return std::make_unique<LocalLauncher>();
  }
  return std::make_unique<LocalLauncher>();
}

}  // namespace ncclfi::cli
