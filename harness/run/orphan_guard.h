// Guarantees that no rank outlives ncclfi, even when ncclfi is SIGKILLed (nothing of ours runs then).
// Three layers: each rank gets PR_SET_PDEATHSIG (rank_process_boost.cc); ncclfi becomes a child
// subreaper, so grandchildren re-parent to it while it lives; and a small guard process, forked at
// start-up before any thread, reads process-group ids from a pipe and, when the pipe closes (ncclfi
// died, however), SIGTERMs then SIGKILLs every registered group and every process carrying this
// harness's NCCLFI_HARNESS_ID in its environment (ranks that left their group, mpirun's children), and
// scancels every registered Slurm job.
#pragma once

#include <string>
#include <vector>

namespace ncclfi::cli {

class OrphanGuard {
 public:
  // Forks the guard process. Call once, early in main, before any thread starts.
  static void start();
  // The token every rank carries as NCCLFI_HARNESS_ID.
  static const std::string& harness_id();
  // Registers / forgets a process group to kill if ncclfi dies.
  static void watch_group(int pgid);
  static void forget_group(int pgid);
  // Registers / forgets a Slurm job (by its unique name) to scancel if ncclfi dies: a SIGKILLed srun
  // leaves its tasks running, on this node and on every other.
  static void watch_slurm_job(const std::string& name);
  static void forget_slurm_job(const std::string& name);
};

// Sends `sig` to every process whose environment has NCCLFI_HARNESS_ID=`id` (except the caller).
// Returns how many were signalled. Used by the guard and by teardown's final sweep.
int signal_processes_with_harness_id(const std::string& id, int sig);
}  // namespace ncclfi::cli
