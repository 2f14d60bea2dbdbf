// One cgroup (v2) per attempt: every process the harness starts is moved into it, and at the end of the
// attempt the cgroup is frozen and everything left in it killed. A daemon that left its process group
// (setsid) and dropped NCCLFI_HARNESS_ID from its environment (env -i) escapes the other teardown
// layers, but not its cgroup. Where no cgroup v2 hierarchy can be written (no mount, not permitted),
// teardown keeps to process groups and the harness id, and ncclfi says so once on stderr. Each rank also
// enters a cgroup namespace rooted at the attempt's cgroup before exec (rank_process_boost.cc), so that a
// rank running as root cannot write itself into another cgroup; where that is refused, ncclfi says so
// once too (and the ranks keep the host's view of their cgroups).
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace ncclfi::cli {

class RunCgroup {
 public:
  // A fresh cgroup named `name` under the writable cgroup v2 hierarchy, or nullptr (and the one-time
  // notice) where there is none.
  static std::unique_ptr<RunCgroup> create(const std::string& name);
  ~RunCgroup();  // kills what is left and removes the cgroup
  RunCgroup(const RunCgroup&) = delete;
  RunCgroup& operator=(const RunCgroup&) = delete;

  // Moves `pid` (and its later children) into the cgroup. A child the process forked before the move
  // stays outside, so the ranks enter it themselves before exec (ProcessSpec::cgroup_procs).
  bool add(int pid) const;
  // Freezes the cgroup (nothing in it can fork or react), kills every member, and waits (at most 5 s)
  // until none is left. Returns the pids that were still there.
  std::vector<int> kill_all() const;
  std::vector<int> members() const;
  // SIGKILL to every process that carries `harness_id` (proc_scan.h) and is not in the cgroup: a rank's
  // process that moved itself out. Returns how many were signalled.
  int kill_escapers(const std::string& harness_id) const;
  const std::string& path() const { return path_; }
  // Whether each rank should enter a cgroup namespace rooted at its attempt's cgroup before exec: only
  // where that keeps it in (the hierarchy is mounted with nsdelegate and unshare is allowed), so that a
  // rank's view of its cgroups is not changed for nothing. Decided by the first create(); a plain read,
  // safe between fork and exec.
  static bool ranks_enter_cgroup_namespace();

 private:
  explicit RunCgroup(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

}  // namespace ncclfi::cli
