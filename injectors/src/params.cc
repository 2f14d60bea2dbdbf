#include "ncclfi/params.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstdlib>

namespace ncclfi {
namespace {

std::string env_string(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : std::string();
}

// An integer value, or `fallback` when unset or malformed (a bad value never breaks a job).
long parse_long(const char* v, long fallback) {
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  errno = 0;
  long value = std::strtol(v, &end, 10);
  if (errno != 0 || *end != '\0') return fallback;
  return value;
}

long env_long(const char* name, long fallback) {
  return parse_long(std::getenv(name), fallback);
}

bool env_flag(const char* name) {
  std::string v = env_string(name);
  return !v.empty() && v != "0" && v != "false" && v != "no";
}

template <typename Names>
int first_int(const Names& names, const std::function<const char*(const char*)>& lookup) {
  for (const char* name : names) {
    long v = parse_long(lookup(name), -1);
    if (v >= 0 && v <= INT_MAX) return static_cast<int>(v);
  }
  return -1;
}

// "0,1,5": whole numbers separated by commas; a malformed list is no list (a bad value never breaks a
// job, it only leaves the node unknown).
std::vector<int> rank_list(const std::string& text) {
  std::vector<int> ranks;
  size_t start = 0;
  while (!text.empty() && start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const long r = parse_long(text.substr(start, comma - start).c_str(), -1);
    if (r < 0 || r > INT_MAX) return {};
    ranks.push_back(static_cast<int>(r));
    start = comma + 1;
  }
  return ranks;
}

}  // namespace

int resolve_rank(const std::function<const char*(const char* name)>& lookup) {
  return first_int(kRankEnvVars, lookup);
}

int resolve_rank_from_env() {
  return resolve_rank([](const char* name) { return std::getenv(name); });
}

int resolve_world_size_from_env() {
  static constexpr std::array<const char*, 5> kSizeVars = {
      "NCCLFI_WORLD_SIZE", "WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS", "PMI_SIZE"};
  return first_int(kSizeVars, [](const char* name) { return std::getenv(name); });
}

Params Params::from_env() {
  Params p;
  p.plan_path = env_string("NCCLFI_PLAN");
  p.events_path = env_string("NCCLFI_EVENTS");
  p.run_dir = env_string("NCCLFI_RUN_DIR");
  p.rank = resolve_rank_from_env();
  p.world_size = resolve_world_size_from_env();
  p.attempt = static_cast<int>(env_long("NCCLFI_ATTEMPT", 0));
  static constexpr std::array<const char*, 3> kLocalRankVars = {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
                                                                "SLURM_LOCALID"};
  p.local_rank = first_int(kLocalRankVars, [](const char* name) { return std::getenv(name); });
  p.node_ranks = rank_list(env_string("NCCLFI_NODE_RANKS"));
  p.quiet = env_flag("NCCLFI_QUIET");
  p.log = env_flag("NCCLFI_LOG") && !p.quiet;
  p.trace_ops = env_flag("NCCLFI_TRACE_OPS");
  p.time_ops = env_flag("NCCLFI_TIME_OPS");
  p.record_nccl_env = env_flag("NCCLFI_RECORD_NCCL_ENV");
  p.net_inner = env_string("NCCLFI_NET_INNER");
  if (const long nsocks = env_long("NCCLFI_NET_NSOCKS", -1); nsocks >= 0)  // unset: the shim decides
    p.net_nsocks = static_cast<int>(std::min(nsocks, 64L));
  p.net_nthreads = static_cast<int>(std::clamp(env_long("NCCLFI_NET_NTHREADS", p.net_nthreads), 0L, 16L));
  if (std::string v = env_string("NCCLFI_NET_PROGRESS"); v == "caller" || v == "helpers") p.net_progress = v;
  p.net_speed_mbps =
      static_cast<int>(std::clamp(env_long("NCCLFI_NET_SPEED_MBPS", p.net_speed_mbps), 1L, 10000000L));
  p.net_inline_bytes =
      static_cast<int>(std::clamp(env_long("NCCLFI_NET_INLINE", p.net_inline_bytes), 0L, 4096L));
  p.net_min_chunk = static_cast<size_t>(
      std::clamp(env_long("NCCLFI_NET_MIN_CHUNK", static_cast<long>(p.net_min_chunk)), 4096L, 1L << 30));
  p.net_hello_timeout_ms = static_cast<int>(
      std::clamp(env_long("NCCLFI_NET_HELLO_TIMEOUT_MS", p.net_hello_timeout_ms), 10L, 3'600'000L));
  if (std::string lib = env_string("NCCLFI_CUDA_DRIVER_LIB"); !lib.empty()) p.cuda_driver_lib = lib;
  p.ibverbs_real = env_string("NCCLFI_IBVERBS_REAL");
  if (p.run_dir.empty() && !p.plan_path.empty()) {
    auto slash = p.plan_path.rfind('/');
    p.run_dir = slash == std::string::npos ? "." : p.plan_path.substr(0, slash);
  }
  return p;
}

const Params& Params::get() {
  static const Params params = from_env();
  return params;
}

}  // namespace ncclfi
