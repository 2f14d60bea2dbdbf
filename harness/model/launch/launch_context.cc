// Where ncclfi's files are, the injection variables and the workload's argv (launch_context.h).
#include "launch_context.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "ncclfi/install_layout.h"
#include "ncclfi/shared_gpu.h"

namespace ncclfi::cli {
namespace fs = std::filesystem;

Installation Installation::for_executable(const std::string& exe, const char* (*getenv)(const char*)) {
  auto var = [getenv](const char* name) -> std::string {
    const char* v = getenv(name);
    return v != nullptr ? v : "";
  };
  fs::path prefix = fs::path(exe).parent_path().parent_path();
  if (const auto p = var("NCCLFI_BUILD_DIR"); !p.empty()) prefix = p;
  Installation inst;
  inst.bin_dir = (prefix / "bin").string();
  inst.lib_dir = private_lib_dir(prefix.string());
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
    // A rank that runs as a node of its own name (the labs) is that node to NCCL too: NCCL prints the
    // value under NCCL_DEBUG=INFO ("NCCL_HOSTID set by environment to ..."), where ncclfi's own would show.
    const auto& names = ctx.scenario->launcher.hostnames;
    if (static_cast<size_t>(rank) < names.size()) env["NCCL_HOSTID"] = names[static_cast<size_t>(rank)];
    return;
  }
  env[kSharedGpusVar] = std::to_string(ctx.gpu.gpus);
  env[kSharedGpuListVar] = visible;
  if (!ctx.scenario->layer_api && !ctx.scenario->time_ops) {  // inert without a plan: only the variables
    env["LD_PRELOAD"] = ctx.install.lib_dir + "/libncclfi-preload.so";
  }
}

}  // namespace

bool ranks_run_quiet(const Scenario& s, const std::map<std::string, std::string>& parent_env) {
  const auto on = [](const std::map<std::string, std::string>& env) {
    const auto it = env.find("NCCLFI_QUIET");
    return it != env.end() && !it->second.empty() && it->second != "0";
  };
  return on(s.env) || on(parent_env) || std::find(s.tags.begin(), s.tags.end(), "drill") != s.tags.end();
}

bool ranks_run_quiet(const LaunchContext& ctx) {
  return ranks_run_quiet(*ctx.scenario, ctx.parent_env);
}

bool job_has_injector(const Scenario& s) {
  return s.layer_api || s.layer_net || s.layer_verbs;
}

std::map<std::string, std::string> injection_env(const LaunchContext& ctx, int rank) {
  const Scenario& s = *ctx.scenario;
  std::map<std::string, std::string> env = s.env;
  // A drill's or a lab's ranks leave in their output only what the real failure would: the preload, the
  // shim and cpu-ring name neither ncclfi nor an injection (params.h), and the shim is NCCL's "IB".
  const bool quiet = ranks_run_quiet(ctx);
  if (quiet) env["NCCLFI_QUIET"] = "1";
  if (ctx.inject && !s.plan.faults.empty()) env["NCCLFI_PLAN"] = ctx.plan_path;
  // With node agents, each node's ranks write their events and open their control FIFOs in the node's
  // spool directory, which its agent reads: no file is shared between hosts.
  env["NCCLFI_EVENTS"] = ctx.agent_spool.empty() ? ctx.events_path : ctx.agent_spool + "/events.jsonl";
  env["NCCLFI_RUN_DIR"] = ctx.agent_spool.empty() ? ctx.run_dir : ctx.agent_spool;
  // ... and `ncclfi agent --exec` keeps a copy of the rank's output there (rank_output_tail.h), and hands
  // the program its node's injection channel when there is an injector to take it.
  if (!ctx.agent_spool.empty()) env[kAgentSpoolVar] = ctx.agent_spool;
  if (!ctx.agent_spool.empty() && job_has_injector(s)) env[kInjectFromAgentVar] = "1";
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
  // Where the preload is loaded it records what libnccl read of the environment (nccl_env.h).
  env["NCCLFI_RECORD_NCCL_ENV"] = "1";
  // Directories the ranks' loader searches first (LD_LIBRARY_PATH), before the one they inherit.
  std::vector<std::string> lib_path;
  if (s.layer_net) {
    // In quiet mode NCCL finds the shim as "libnccl-net.so", the name it tries by default, in a directory
    // whose path names nothing of ncclfi (quiet_net_plugin.h): its INFO lines ("Successfully loaded external
    // network plugin PATH") then read as a cluster's installed plugin's do.
    if (!ctx.net_plugin_dir.empty()) {
      lib_path.push_back(ctx.net_plugin_dir);
    } else {
      env["NCCL_NET_PLUGIN"] = ctx.install.lib_dir + "/libnccl-net-ncclfi.so";
    }
    if (s.ib_persona) env["NCCLFI_NET_PERSONA"] = "ib";
    if (!s.env.count("NCCL_NET"))
      env["NCCL_NET"] = quiet || s.ib_persona ? "IB" : "ncclfi";    // the name the shim gives itself
    if (!s.net_wrap.empty()) env["NCCLFI_NET_INNER"] = s.net_wrap;  // travels with -x / env like the rest
  }
  if (s.layer_verbs) {
    // NCCL 2.30.3 and later dlopen NCCL_IBVERBS_LIB; older ones dlopen libibverbs.so.1, which lib/ibverbs/
    // (first on LD_LIBRARY_PATH) answers with the same wrapper.
    env["NCCL_IBVERBS_LIB"] = ctx.install.lib_dir + "/libncclfi-ibverbs.so";
    lib_path.push_back(ctx.install.lib_dir + "/ibverbs");
  }
  if (!lib_path.empty()) {
    std::string inherited;
    if (const auto it = s.env.find("LD_LIBRARY_PATH"); it != s.env.end()) {
      inherited = it->second;
    } else if (const auto own = ctx.parent_env.find("LD_LIBRARY_PATH"); own != ctx.parent_env.end()) {
      inherited = own->second;
    }
    if (!inherited.empty()) lib_path.push_back(inherited);
    std::string joined;
    for (const std::string& dir : lib_path) joined += (joined.empty() ? "" : ":") + dir;
    env["LD_LIBRARY_PATH"] = joined;
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

}  // namespace ncclfi::cli
