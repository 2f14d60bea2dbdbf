// Shared-GPU mode's MPS daemons for one attempt: one per generation of the job's processes. An MPS
// client killed in the middle of GPU work leaves its server an error that the next client to connect
// takes (docs/failure-signatures.md, section 8); the harness's own relaunch gets fresh daemons per
// attempt, and the workers a launcher restarts inside the job (torchrun's --max-restarts) find their
// generation's daemon through the preload (ncclfi/shared_gpu.h). This file also decides which lines of
// the daemons' logs say that the MPS server itself failed.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "mps_daemon.h"

namespace ncclfi::cli {

class MpsGenerations {
 public:
  // Starts `generations` daemons (1 to kMaxMpsGenerations), generation N's on
  // mps_pipe_dir(base, N, generations) with its log in log_dir/gN/. `env` is their environment;
  // daemon N is marked NCCLFI_HARNESS_ID=<harness_id>-mps-gN (what stop() kills). nullptr, with `why_not`
  // set, when generation 0's cannot start; when a later one cannot, the generations end before it (and
  // `why_not` says why) and its processes run without MPS.
  static std::unique_ptr<MpsGenerations> start(const std::string& base, const std::string& log_dir,
                                               int generations, const std::map<std::string, std::string>& env,
                                               const std::string& harness_id, std::string* why_not);
  ~MpsGenerations();  // stop()
  MpsGenerations(const MpsGenerations&) = delete;
  MpsGenerations& operator=(const MpsGenerations&) = delete;

  int count() const { return static_cast<int>(daemons_.size()); }
  // What every process of the job needs: generation 0's CUDA_MPS_PIPE_DIRECTORY and
  // CUDA_MPS_LOG_DIRECTORY, and the base and count the preload picks a later generation's daemon from.
  std::map<std::string, std::string> client_env() const;
  // The MPS servers' own failures in the daemons' logs, "gN: <line>", at most `max` of them.
  std::vector<std::string> server_failures(size_t max) const;
  // Stops every daemon (MpsDaemon::stop) and removes the base directory.
  void stop();

 private:
  MpsGenerations(std::string base, std::vector<std::unique_ptr<MpsDaemon>> daemons);
  std::string base_;
  std::vector<std::unique_ptr<MpsDaemon>> daemons_;
};

// Whether a line of an MPS daemon's log says that its server hit a fatal GPU error: "Client {...}
// encountered a fatal GPU error.", "Server is handling a fatal GPU error.", and the sticky-error list
// that follows them (the server's own wording, measured with CUDA 13's MPS).
bool is_mps_server_failure(const std::string& line);

}  // namespace ncclfi::cli
