// One spawned process of a job (a rank, or a launcher such as mpirun/torchrun serving every rank),
// in its own process group, its stdout and stderr captured to one file. The only code that touches
// Boost.Process is rank_process_boost.cc (its headers are slow to compile and its edges are many:
// terminate() is SIGKILL only, a killed child must still be reaped, the signal is in the raw status).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "launch_context.h"

namespace ncclfi::cli {

class RankProcess {
 public:
  // Starts the process in a new process group (pgid == pid) that dies with ncclfi's main thread
  // (PR_SET_PDEATHSIG). Must be called from the main thread. Throws std::runtime_error when the
  // program cannot be found or started.
  static std::unique_ptr<RankProcess> spawn(const ProcessSpec& spec);
  virtual ~RankProcess() = default;

  virtual int pid() const = 0;
  // Non-blocking: reaps the process when it has ended. True once it has.
  virtual bool poll() = 0;
  // Sends `sig` to the whole process group (the rank and anything it started). No-op once reaped.
  virtual void signal_group(int sig) = 0;
  // Set once poll() returned true: exactly one of them.
  virtual std::optional<int> exit_code() const = 0;
  virtual std::optional<int> exit_signal() const = 0;
  const ProcessSpec& spec() const { return spec_; }

 protected:
  explicit RankProcess(ProcessSpec spec) : spec_(std::move(spec)) {}
  ProcessSpec spec_;
};

}  // namespace ncclfi::cli
