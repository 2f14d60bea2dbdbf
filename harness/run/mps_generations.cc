#include "mps_generations.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "ncclfi/shared_gpu.h"
#include "observe.h"

namespace ncclfi::cli {
namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxLogLineBytes = 400;  // a failure line is short; the rest of a longer one is dropped

}  // namespace

bool is_mps_server_failure(const std::string& line) {
  for (const char* said :
       {"encountered a fatal GPU error", "Server is handling a fatal GPU error", "have a sticky error set"}) {
    if (line.find(said) != std::string::npos) return true;
  }
  return false;
}

MpsGenerations::MpsGenerations(std::string base, std::vector<std::unique_ptr<MpsDaemon>> daemons)
    : base_(std::move(base)), daemons_(std::move(daemons)) {}

std::unique_ptr<MpsGenerations> MpsGenerations::start(const std::string& base, const std::string& log_dir,
                                                      int generations,
                                                      const std::map<std::string, std::string>& env,
                                                      const std::string& harness_id, std::string* why_not) {
  generations = std::clamp(generations, 1, kMaxMpsGenerations);
  std::error_code ec;
  fs::create_directories(base, ec);
  // Where the processes of a generation past the daemons point: no daemon there, so no MPS.
  fs::create_directories(mps_pipe_dir(base, generations, generations), ec);
  std::vector<std::unique_ptr<MpsDaemon>> daemons;
  for (int g = 0; g < generations; ++g) {
    auto daemon_env = env;
    daemon_env["NCCLFI_HARNESS_ID"] = harness_id + "-mps-g" + std::to_string(g);
    std::string why;
    auto daemon = MpsDaemon::start(mps_pipe_dir(base, g, generations), log_dir + "/g" + std::to_string(g),
                                   daemon_env, &why);
    if (!daemon) {
      *why_not = g == 0 ? why : "generation " + std::to_string(g) + "'s daemon: " + why;
      break;
    }
    daemons.push_back(std::move(daemon));
  }
  if (daemons.empty()) {
    fs::remove_all(base, ec);
    return nullptr;
  }
  return std::unique_ptr<MpsGenerations>(new MpsGenerations(base, std::move(daemons)));
}

MpsGenerations::~MpsGenerations() {
  stop();
}

std::map<std::string, std::string> MpsGenerations::client_env() const {
  if (daemons_.empty()) return {};
  auto env = daemons_.front()->client_env();
  env[kMpsPipeBaseVar] = base_;
  env[kMpsGenerationsVar] = std::to_string(count());
  return env;
}

std::vector<std::string> MpsGenerations::server_failures(size_t max) const {
  std::vector<std::string> lines;
  for (size_t g = 0; g < daemons_.size() && lines.size() < max; ++g) {
    std::ifstream in(daemons_[g]->log_path(), std::ios::binary);
    std::string line;
    while (lines.size() < max && harness::read_bounded_line(in, line, kMaxLogLineBytes)) {
      if (is_mps_server_failure(line)) lines.push_back("g" + std::to_string(g) + ": " + line);
    }
  }
  return lines;
}

void MpsGenerations::stop() {
  if (daemons_.empty()) return;
  for (auto& daemon : daemons_) daemon->stop();
  daemons_.clear();
  std::error_code ec;
  fs::remove_all(base_, ec);
}

}  // namespace ncclfi::cli
