// A `sleep 30` with exactly the given environment: what the /proc scans of the tests look for. Shared by
// the launcher, multihost and proc-scan tests (one test binary).
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace ncclfi::cli::test_support {

// True once /proc/PID/environ holds every one of `vars`. The exe link changes before the kernel sets up
// the new environment (begin_new_exec comes before create_elf_tables), so a scan between the two sees an
// empty environment: seen on a loaded CI host.
inline bool environ_has(pid_t pid, const std::vector<std::string>& vars) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  std::string entry;
  std::vector<std::string> seen;
  while (std::getline(in, entry, '\0')) seen.push_back(entry);
  for (const auto& v : vars)
    if (std::find(seen.begin(), seen.end(), v) == seen.end()) return false;
  return true;
}

// Returns once the child runs /bin/sleep with its whole environment in place (at most 10 s): before that,
// /proc shows the test's own environment, or none.
inline pid_t start_sleeper(std::vector<std::string> vars) {
  const pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> envp;
    for (auto& v : vars) envp.push_back(v.data());
    envp.push_back(nullptr);
    char sleep_path[] = "/bin/sleep";
    char seconds[] = "30";
    char* argv[] = {sleep_path, seconds, nullptr};
    execve(sleep_path, argv, envp.data());
    _exit(127);
  }
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < end) {
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec);
    if (!ec && std::filesystem::equivalent(exe, "/bin/sleep", ec) && environ_has(pid, vars)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return pid;
}

inline void stop_sleepers(const std::vector<pid_t>& pids) {
  for (pid_t p : pids) {
    kill(p, SIGKILL);
    waitpid(p, nullptr, 0);
  }
}

}  // namespace ncclfi::cli::test_support
