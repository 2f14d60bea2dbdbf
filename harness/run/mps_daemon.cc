#include "mps_daemon.h"

#include <signal.h>
#include <time.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "ncclfi/event_log.h"
#include "orphan_guard.h"
#include "rank_process.h"

namespace ncclfi::cli {
namespace fs = std::filesystem;

namespace {

constexpr double kStartTimeoutS = 10;  // the control daemon creates its socket in well under a second
constexpr double kQuitTimeoutS = 5;    // a server with clients stuck in GPU work may never quit

void nap_ms(long ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1'000'000};
  nanosleep(&ts, nullptr);
}

// Polls `done` until it is true or `seconds` passed (monotonic clock).
template <class Done>
bool wait_until(double seconds, Done done) {
  const int64_t end = Clock::mono_ns() + static_cast<int64_t>(seconds * 1e9);
  while (!done()) {
    if (Clock::mono_ns() >= end) return false;
    nap_ms(20);
  }
  return true;
}

std::string last_line_of(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line)) {
    if (!line.empty()) last = line;
  }
  return last;
}

}  // namespace

MpsDaemon::MpsDaemon(std::unique_ptr<RankProcess> process, std::string pipe_dir, std::string log_dir,
                     std::map<std::string, std::string> env)
    : process_(std::move(process)),
      pipe_dir_(std::move(pipe_dir)),
      log_dir_(std::move(log_dir)),
      env_(std::move(env)) {}

std::unique_ptr<MpsDaemon> MpsDaemon::start(const std::string& pipe_dir, const std::string& log_dir,
                                            std::map<std::string, std::string> env, std::string* why_not) {
  std::error_code ec;
  fs::create_directories(pipe_dir, ec);
  fs::create_directories(log_dir, ec);
  env["CUDA_MPS_PIPE_DIRECTORY"] = pipe_dir;
  env["CUDA_MPS_LOG_DIRECTORY"] = log_dir;
  ProcessSpec spec;
  spec.argv = {kMpsControlProgram, "-f"};  // foreground: our child, so its fate is ours to see
  spec.env = env;
  spec.log_path = log_dir + "/control.out";
  std::unique_ptr<RankProcess> process;
  try {
    process = RankProcess::spawn(spec);
  } catch (const std::exception& e) {
    *why_not = e.what();
    fs::remove_all(pipe_dir, ec);
    return nullptr;
  }
  OrphanGuard::watch_group(process->pid());
  // Serving once its control socket exists; a daemon that exits first failed (another MPS daemon on
  // the GPU, a GPU in a compute mode that forbids it, ...): its last output line says why.
  const std::string socket = pipe_dir + "/control";
  const bool serving = wait_until(kStartTimeoutS, [&] { return process->poll() || fs::exists(socket, ec); });
  if (!serving || process->poll()) {
    std::string why =
        serving ? "exited" : "no control socket after " + std::to_string(int(kStartTimeoutS)) + " s";
    if (const std::string last = last_line_of(spec.log_path); !last.empty()) why += ": " + last;
    *why_not = std::string(kMpsControlProgram) + " " + why;
    process->signal_group(SIGKILL);
    process->poll();
    OrphanGuard::forget_group(process->pid());
    fs::remove_all(pipe_dir, ec);
    return nullptr;
  }
  return std::unique_ptr<MpsDaemon>(new MpsDaemon(std::move(process), pipe_dir, log_dir, std::move(env)));
}

MpsDaemon::~MpsDaemon() {
  stop();
}

std::map<std::string, std::string> MpsDaemon::client_env() const {
  return {{"CUDA_MPS_PIPE_DIRECTORY", pipe_dir_}, {"CUDA_MPS_LOG_DIRECTORY", log_dir_}};
}

void MpsDaemon::stop() {
  if (!process_) return;
  if (!process_->poll()) {
    // The documented way to stop MPS: `quit` to the control program, which talks to the daemon.
    ProcessSpec quit;
    quit.argv = {"/bin/sh", "-c", std::string("echo quit | ") + kMpsControlProgram};
    quit.env = env_;
    quit.log_path = log_dir_ + "/quit.out";
    try {
      auto client = RankProcess::spawn(quit);
      wait_until(kQuitTimeoutS, [&] { return client->poll(); });
    } catch (const std::exception&) {
      // fall through to the kill below
    }
    wait_until(kQuitTimeoutS, [&] { return process_->poll(); });
  }
  process_->signal_group(SIGKILL);  // the MPS server, if the daemon left it behind
  process_->poll();
  // A server that left the daemon's process group still carries the daemon's environment.
  if (const auto id = env_.find("NCCLFI_HARNESS_ID"); id != env_.end()) {
    signal_processes_with_harness_id(id->second, SIGKILL);
  }
  OrphanGuard::forget_group(process_->pid());
  process_.reset();
  std::error_code ec;
  fs::remove_all(pipe_dir_, ec);
}

}  // namespace ncclfi::cli
