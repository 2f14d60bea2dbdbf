// Finding scenario files and deciding whether this host can run them.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <unistd.h>

#include "ib_ports.h"
#include "launcher_spec.h"
#include "nccl_symbols.h"
#include "scenario.h"

namespace ncclfi::cli {

namespace fs = std::filesystem;

std::vector<std::string> expand_scenario_paths(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<std::string> found;
      for (auto it = fs::recursive_directory_iterator(p, ec); it != fs::recursive_directory_iterator();
           it.increment(ec)) {
        const auto& entry = *it;
        // Training labs (`ncclfi lab`, docs/labs.md) are not scenarios: their jobs are, once a variant is
        // picked. A directory named `labs` inside a directory given is left to `ncclfi lab`.
        if (entry.is_directory() && entry.path().filename() == "labs") {
          it.disable_recursion_pending();
          continue;
        }
        const auto ext = entry.path().extension();
        if (entry.is_regular_file() && (ext == ".json" || ext == ".yaml" || ext == ".yml") &&
            entry.path().filename() != "schema.json") {
          found.push_back(entry.path().string());
        }
      }
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::exists(p, ec)) {
      files.push_back(p);  // a FIFO or a device too: load_scenario refuses it, saying what it is
    } else {
      throw ScenarioError(p, {{"", "a scenario file or a directory of them", "no such file or directory"}});
    }
  }
  return files;
}

bool command_on_path(const std::string& name) {
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  if (path == nullptr) return false;
  std::string dirs = path;
  size_t start = 0;
  while (start <= dirs.size()) {
    const size_t end = dirs.find(':', start);
    const std::string dir = dirs.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!dir.empty() && access((dir + "/" + name).c_str(), X_OK) == 0) return true;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return false;
}

std::string unmet_requirement(const Scenario& s) {
  for (const auto& var : s.required_env) {
    const char* v = std::getenv(var.c_str());
    if (v == nullptr || *v == '\0') return "needs $" + var;
  }
  for (const auto& cmd : s.required_commands) {
    if (!command_on_path(cmd)) return "needs `" + cmd + "` on PATH";
  }
  if (!s.required_nccl_symbols.empty() || !s.required_nccl_version.empty()) {
    // The job's libnccl: the one its LD_LIBRARY_PATH (the scenario's, else ncclfi's own) finds first.
    const auto env = s.env.find("LD_LIBRARY_PATH");
    const char* own = std::getenv("LD_LIBRARY_PATH");
    const std::string dirs = env != s.env.end() ? env->second : own != nullptr ? own : "";
    if (std::string why = nccl_older_than(s.required_nccl_version, dirs); !why.empty()) return why;
    if (std::string why = missing_nccl_symbols(s.required_nccl_symbols, dirs); !why.empty()) return why;
  }
  if (std::string why = too_few_ib_ports(s.required_ib_ports); !why.empty()) return why;
  // A launcher through a node launcher needs that one as much as the node launcher's own jobs do.
  for (const LauncherSpec* spec : {node_launcher_of(s), &launcher_of(s)}) {
    if (spec == nullptr || spec->unmet_requirement == nullptr) continue;
    if (std::string why = spec->unmet_requirement(); !why.empty()) return why;
  }
  return "";
}

}  // namespace ncclfi::cli
