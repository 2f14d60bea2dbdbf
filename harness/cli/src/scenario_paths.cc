// Finding scenario files and deciding whether this host can run them.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <unistd.h>

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

namespace {

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

}  // namespace

int count_visible_gpus() {
  if (const char* forced = std::getenv("NCCLFI_VISIBLE_GPUS")) return std::atoi(forced);
  if (!command_on_path("nvidia-smi")) return 0;
  FILE* pipe = popen("nvidia-smi -L 2>/dev/null", "r");
  if (pipe == nullptr) return 0;
  int gpus = 0;
  char line[512];
  while (fgets(line, sizeof line, pipe) != nullptr) {
    if (std::string(line).rfind("GPU ", 0) == 0) ++gpus;
  }
  pclose(pipe);
  return gpus;
}

std::string unmet_requirement(const Scenario& s) {
  for (const auto& var : s.required_env) {
    const char* v = std::getenv(var.c_str());
    if (v == nullptr || *v == '\0') return "needs $" + var;
  }
  for (const auto& cmd : s.required_commands) {
    if (!command_on_path(cmd)) return "needs `" + cmd + "` on PATH";
  }
  // torchrun across nodes needs its node launcher as much as mpirun and srun jobs need theirs.
  const LauncherKind placer = s.launcher.node_launcher.value_or(s.launcher.kind);
  if (placer == LauncherKind::kMpirun && !command_on_path("mpirun")) return "needs `mpirun` on PATH";
  if (placer == LauncherKind::kSrun) {
    if (!command_on_path("srun")) return "needs `srun` on PATH";
    // Without a configuration srun cannot find a controller (scripts/slurm-local starts a local one).
    const char* conf = std::getenv("SLURM_CONF");
    std::error_code ec;
    if ((conf == nullptr || *conf == '\0') && !std::filesystem::exists("/etc/slurm/slurm.conf", ec))
      return "needs a Slurm cluster: $SLURM_CONF or /etc/slurm/slurm.conf (scripts/slurm-local starts one)";
  }
  if (s.launcher.kind == LauncherKind::kTorchrun && !command_on_path("torchrun"))
    return "needs `torchrun` on PATH";
  return "";
}

}  // namespace ncclfi::cli
