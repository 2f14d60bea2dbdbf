// The contract every ncclfi workload keeps so the harness can judge them alike (docs/outcomes.md says how the
// judge reads it): the exit codes. The workloads' own rendezvous is workloads/common/rendezvous.h.
#pragma once

namespace ncclfi {

// Exit codes of every workload.
enum ExitCode : int {
  kExitOk = 0,
  kExitNcclError = 2,     // an NCCL call returned an error
  kExitWatchdog = 3,      // the workload's own watchdog timed out
  kExitVerification = 4,  // data verification failed with --check
  kExitAsyncError = 5,    // ncclCommGetAsyncError (or the net plugin) reported an error
  kExitBootstrap = 6,     // rendezvous / communicator creation failed, or no GPU
  kExitNanLoss = 7,       // ddp_train.py: loss turned NaN/inf
  kExitNoRecovery = 8,    // --recover: in-place recovery impossible (no ncclCommShrink, rank 0 lost, ...)
  kExitUsage = 64,        // bad arguments
};

}  // namespace ncclfi
