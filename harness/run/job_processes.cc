#include "job_processes.h"

#include <signal.h>

#include <algorithm>

#include "observe.h"
#include "orphan_guard.h"

namespace ncclfi::cli {

const JobProcess& JobProcesses::start(ProcessSpec spec, const std::string& cgroup_procs) {
  if (!cgroup_procs.empty()) spec.cgroup_procs = cgroup_procs;
  auto process = RankProcess::spawn(spec);
  OrphanGuard::watch_group(process->pid());
  if (!spec.slurm_job_name.empty()) OrphanGuard::watch_slurm_job(spec.slurm_job_name);
  procs_.push_back(
      {std::move(process), OutputTailer(spec.log_path, 0, harness::kMaxLineBytes), false, false});
  return procs_.back();
}

int JobProcesses::alive() const {
  return static_cast<int>(
      std::count_if(procs_.begin(), procs_.end(), [](const auto& p) { return !p.reaped; }));
}

void JobProcesses::reap(const std::function<void(const JobProcess&)>& ended) {
  for (auto& p : procs_) {
    if (p.reaped || !p.process->poll()) continue;
    p.reaped = true;
    OrphanGuard::forget_group(p.process->pid());
    if (!p.process->spec().slurm_job_name.empty())
      OrphanGuard::forget_slurm_job(p.process->spec().slurm_job_name);
    ended(p);
  }
}

void JobProcesses::terminate(const std::function<void(const JobProcess&)>& before) {
  for (auto& p : procs_) {
    if (p.reaped) continue;
    p.torn_down = true;
    before(p);
    p.process->signal_group(SIGCONT);
    p.process->signal_group(SIGTERM);
  }
}

void JobProcesses::kill() {
  for (auto& p : procs_)
    if (!p.reaped) p.process->signal_group(SIGKILL);
}

bool JobProcesses::signal_rank(int rank, int sig, EventTime* sent) {
  for (auto& p : procs_) {
    if (p.rank() != rank || p.reaped) continue;
    if (sent != nullptr) *sent = EventTime::now();
    p.process->signal_group(sig);
    return true;
  }
  return false;
}

std::set<int> JobProcesses::running_ranks(bool* launcher_alive) const {
  std::set<int> ranks;
  *launcher_alive = false;
  for (const auto& p : procs_) {
    if (p.reaped) continue;
    if (p.rank() >= 0)
      ranks.insert(p.rank());
    else
      *launcher_alive = true;
  }
  return ranks;
}

}  // namespace ncclfi::cli
