// ncclfi's own CUDA MPS daemon for shared-GPU mode. Without MPS, the ranks that share a GPU
// time-slice it (an 8 B all_reduce takes milliseconds); with it their kernels run side by side. The
// daemon is private (its own pipe and log directories, never the system's) and lives for one attempt:
// an MPS server whose client was killed in the middle of GPU work hands an error to the next client
// that connects, so each attempt, and each generation of a job that restarts its processes itself,
// gets a fresh one (mps_generations.h).
#pragma once

#include <map>
#include <memory>
#include <string>

namespace ncclfi::cli {

class RankProcess;

class MpsDaemon {
 public:
  // Starts `nvidia-cuda-mps-control -f` (found on PATH) with the pipe directory `pipe_dir` (short: a
  // Unix socket path lives there) and the log directory `log_dir`, and waits until it serves its
  // control socket. `env` is the daemon's environment; its NCCLFI_HARNESS_ID should be unique to this
  // daemon (stop() kills whatever still carries it). nullptr, with `why_not` set, when it cannot.
  static std::unique_ptr<MpsDaemon> start(const std::string& pipe_dir, const std::string& log_dir,
                                          std::map<std::string, std::string> env, std::string* why_not);
  ~MpsDaemon();  // stop()
  MpsDaemon(const MpsDaemon&) = delete;
  MpsDaemon& operator=(const MpsDaemon&) = delete;

  // What the job's processes need to be its clients.
  std::map<std::string, std::string> client_env() const;
  // Where the daemon's output goes: its own lines and its server's (`-f` writes both there).
  std::string log_path() const { return log_dir_ + "/control.out"; }
  // Asks the daemon to quit (`quit` on its control socket), waits a few seconds, then kills its
  // process group (the control daemon and the MPS server it started) and removes the pipe directory.
  void stop();

 private:
  MpsDaemon(std::unique_ptr<RankProcess> process, std::string pipe_dir, std::string log_dir,
            std::map<std::string, std::string> env);
  std::unique_ptr<RankProcess> process_;
  std::string pipe_dir_, log_dir_;
  std::map<std::string, std::string> env_;
};

// The program that controls MPS ("nvidia-cuda-mps-control").
inline constexpr const char* kMpsControlProgram = "nvidia-cuda-mps-control";

}  // namespace ncclfi::cli
