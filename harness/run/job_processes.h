// The processes of one attempt that the harness starts itself: each rank, or the one launcher that
// serves every rank (mpirun, srun, torchrun). Each starts in the attempt's cgroup and a process group
// of its own, watched by the orphan guard, its output followed from its log file; the attempt loop
// reaps them, signals a rank's group for a proc fault, and ends them: SIGCONT and SIGTERM, then SIGKILL.
#pragma once

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "ncclfi/event_log.h"
#include "output_tailer.h"
#include "rank_process.h"

namespace ncclfi::cli {

struct JobProcess {
  std::unique_ptr<RankProcess> process;
  OutputTailer output;
  bool reaped = false;
  bool torn_down = false;  // the harness's teardown signalled it to end
  int rank() const { return process->spec().rank; }
};

class JobProcesses {
 public:
  // Starts `spec` in the cgroup whose `cgroup.procs` is `cgroup_procs` (none when empty). Throws
  // std::runtime_error when it cannot be started.
  const JobProcess& start(ProcessSpec spec, const std::string& cgroup_procs);

  std::vector<JobProcess>& all() { return procs_; }
  const std::vector<JobProcess>& all() const { return procs_; }
  int alive() const;
  // Reaps every process that ended since the last call and hands each to `ended`, once.
  void reap(const std::function<void(const JobProcess&)>& ended);
  // The teardown's first step, for every live process: `before` (its record), then SIGCONT (a stopped
  // rank cannot act on SIGTERM) and SIGTERM to its group.
  void terminate(const std::function<void(const JobProcess&)>& before);
  // The teardown's last step: SIGKILL to every live group.
  void kill();
  // Signals the group of the live process that is `rank`, when the harness started one (false when
  // not: a launcher started it); `sent`: just before.
  bool signal_rank(int rank, int sig, EventTime* sent);
  // The ranks of the live processes; `launcher_alive`: a live process serves every rank.
  std::set<int> running_ranks(bool* launcher_alive) const;

 private:
  std::vector<JobProcess> procs_;
};

}  // namespace ncclfi::cli
