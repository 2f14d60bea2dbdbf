#include "run_cgroup.h"

#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>
#include <thread>

#include "proc_scan.h"

namespace ncclfi::cli {
namespace {

// The first cgroup2 mount in /proc/self/mounts ("" when none), and its mount options.
std::string cgroup2_mount(std::string* options = nullptr) {
  std::ifstream mounts("/proc/self/mounts");
  std::string device, dir, type, opts, rest;
  while (mounts >> device >> dir >> type >> opts && std::getline(mounts, rest)) {
    if (type != "cgroup2") continue;
    if (options != nullptr) *options = opts;
    return dir;
  }
  return "";
}

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text << std::flush;
  return static_cast<bool>(out);
}

void say_unavailable_once(const std::string& why) {
  static std::once_flag once;
  std::call_once(once, [&] {
    std::cerr << "ncclfi: no cgroup per run (" << why
              << "): teardown uses process groups and the harness id only; a rank's daemon that leaves both "
                 "can outlive its run\n";
  });
}

// An ncclfi that was SIGKILLed could not remove its cgroup (its orphan guard killed the members):
// empty `ncclfi-<pid>-...` cgroups whose ncclfi is gone are removed by the next one.
void remove_stale_cgroups(const std::string& root) {
  DIR* dir = ::opendir(root.c_str());
  if (dir == nullptr) return;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    if (name.rfind("ncclfi-", 0) != 0) continue;
    const long pid = std::strtol(name.c_str() + 7, nullptr, 10);
    if (pid <= 0 || ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    ::rmdir((root + "/" + name).c_str());  // fails, harmlessly, while it still has members
  }
  ::closedir(dir);
}

bool g_confine_ranks = false;  // set once, before any rank is started

// Whether a rank's cgroup namespace keeps it in its cgroup: a child must be allowed to enter one
// (CAP_SYS_ADMIN, Linux 4.6), and the kernel refuses a move outside the namespace's root only where the
// hierarchy is mounted with nsdelegate. Tried once; where either is missing ncclfi says so once, since a
// rank running as root can then leave its attempt's cgroup and only the harness id finds it.
void check_ranks_can_be_confined(const std::string& root, const std::string& options) {
  static std::once_flag once;
  std::call_once(once, [&] {
    const pid_t child = ::fork();
    if (child == 0) _exit(::unshare(CLONE_NEWCGROUP) == 0 ? 0 : errno);
    int status = 0;
    if (child < 0 || ::waitpid(child, &status, 0) != child) return;
    std::string why;
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
      why = std::string("unshare(CLONE_NEWCGROUP): ") + std::strerror(WEXITSTATUS(status));
    else if (("," + options + ",").find(",nsdelegate,") == std::string::npos)
      why = root + " is mounted\n  without nsdelegate, so a cgroup namespace is no boundary";
    if (why.empty()) {
      g_confine_ranks = true;
      return;
    }
    // Hard-wrapped: this line comes before a run's table, which is fitted to an 80-column terminal.
    std::cerr << "ncclfi: ranks cannot be confined to their attempt's cgroup:\n  " << why
              << ";\n  a rank running as root can move itself out, so the end of each attempt\n"
                 "  kills what carries the harness id outside the cgroup\n";
  });
}

}  // namespace

std::unique_ptr<RunCgroup> RunCgroup::create(const std::string& name) {
  std::string options;
  const std::string root = cgroup2_mount(&options);
  if (root.empty()) {
    say_unavailable_once("no cgroup v2 hierarchy is mounted");
    return nullptr;
  }
  static std::once_flag swept;
  std::call_once(swept, [&] { remove_stale_cgroups(root); });
  const std::string path = root + "/" + name;
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
    say_unavailable_once("cannot create " + path + ": " + std::strerror(errno));
    return nullptr;
  }
  if (::access((path + "/cgroup.kill").c_str(), W_OK) != 0) {
    ::rmdir(path.c_str());
    say_unavailable_once(path + " has no cgroup.kill (Linux 5.14 or later)");
    return nullptr;
  }
  check_ranks_can_be_confined(root, options);
  return std::unique_ptr<RunCgroup>(new RunCgroup(path));
}

bool RunCgroup::ranks_enter_cgroup_namespace() {
  return g_confine_ranks;
}

RunCgroup::~RunCgroup() {
  kill_all();
  ::rmdir(path_.c_str());
}

bool RunCgroup::add(int pid) const {
  return write_file(path_ + "/cgroup.procs", std::to_string(pid));
}

std::vector<int> RunCgroup::members() const {
  std::ifstream in(path_ + "/cgroup.procs");
  std::vector<int> pids;
  int pid = 0;
  while (in >> pid) pids.push_back(pid);
  return pids;
}

int RunCgroup::kill_escapers(const std::string& harness_id) const {
  const std::vector<int> inside = members();
  int killed = 0;
  for (int pid : job_pids(harness_id))
    if (std::find(inside.begin(), inside.end(), pid) == inside.end())
      killed += ::kill(pid, SIGKILL) == 0 ? 1 : 0;
  return killed;
}

std::vector<int> RunCgroup::kill_all() const {
  std::vector<int> left = members();
  if (left.empty()) return left;
  write_file(path_ + "/cgroup.freeze", "1");  // no fork and no reaction between the look and the kill
  write_file(path_ + "/cgroup.kill", "1");    // SIGKILL to every member, frozen or not, and to new ones
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!members().empty() && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  write_file(path_ + "/cgroup.freeze", "0");
  return left;
}

}  // namespace ncclfi::cli
