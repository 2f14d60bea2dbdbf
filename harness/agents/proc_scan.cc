#include "proc_scan.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "agent_env.h"
#include "ncclfi/params.h"

namespace ncclfi::cli {
namespace {

// Every pid in /proc but the caller's.
std::vector<int> other_pids() {
  std::vector<int> pids;
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return pids;
  const int self = ::getpid();
  while (dirent* e = ::readdir(dir)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (end != e->d_name && *end == '\0' && pid > 0 && pid != self) pids.push_back(static_cast<int>(pid));
  }
  ::closedir(dir);
  return pids;
}

// The environment of `pid` as KEY=VALUE strings (empty when unreadable or gone).
std::vector<std::string> read_environ(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  std::vector<std::string> vars;
  std::string var;
  while (std::getline(in, var, '\0')) vars.push_back(var);
  return vars;
}

std::string link_target(const std::string& path) {
  std::error_code ec;
  return std::filesystem::read_symlink(path, ec).string();
}

bool has_prefix(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace

std::vector<int> job_pids(const std::string& harness_id) {
  const std::string needle = "NCCLFI_HARNESS_ID=" + harness_id;
  std::vector<int> pids;
  for (int pid : other_pids()) {
    for (const auto& var : read_environ(pid)) {
      if (var == needle) {
        pids.push_back(pid);
        break;
      }
    }
  }
  return pids;
}

int rank_of_environment(const std::vector<std::string>& vars) {
  return resolve_rank([&vars](const char* name) -> const char* {
    const std::string prefix = std::string(name) + "=";
    for (const auto& v : vars)
      if (has_prefix(v, prefix)) return v.c_str() + prefix.size();
    return nullptr;
  });
}

std::map<int, std::vector<int>> job_rank_pids(const std::string& harness_id, const RankScan& scan) {
  const std::string needle = "NCCLFI_HARNESS_ID=" + harness_id;
  const std::string marker = std::string(kRankMarkerVar) + "=";
  const std::string agent = std::string(kAgentAddrVar) + "=";
  const std::string own_uts = scan.this_host_only ? link_target("/proc/self/ns/uts") : "";
  const std::string own_exe = scan.with_wrappers ? "" : link_target("/proc/self/exe");
  std::map<int, std::vector<int>> ranks;
  for (int pid : other_pids()) {
    const auto vars = read_environ(pid);
    bool ours = false, marked = false, is_agent = false;
    for (const auto& v : vars) {
      ours = ours || v == needle;
      marked = marked || has_prefix(v, marker);
      is_agent = is_agent || has_prefix(v, agent);
    }
    if (!ours || !marked || is_agent) continue;  // unmarked: a launcher process (torchrun under mpirun)
    const std::string proc = "/proc/" + std::to_string(pid);
    if (scan.this_host_only && link_target(proc + "/ns/uts") != own_uts) continue;
    if (!scan.with_wrappers && link_target(proc + "/exe") == own_exe) continue;
    const int rank = rank_of_environment(vars);
    if (rank >= 0) ranks[rank].push_back(pid);
  }
  return ranks;
}

}  // namespace ncclfi::cli
