#include "orphan_guard.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "child_signals.h"
#include "ncclfi/event_log.h"
#include "ncclfi/params.h"
#include "proc_scan.h"

namespace ncclfi::cli {
namespace {

int g_guard_fd = -1;

std::string make_harness_id() {
  return std::to_string(getpid()) + "-" + std::to_string(Clock::wall_ns());
}

void sleep_ms(long ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000};
  nanosleep(&ts, nullptr);
}

// `scancel --quiet --name=NAME`, waited for at most 5 s (a controller that does not answer must not
// keep the guard alive for ever). Nothing happens when scancel is not installed.
void scancel_job(const std::string& name) {
  const pid_t pid = fork();
  if (pid < 0) return;
  if (pid == 0) {
    reset_signals_in_child();  // not the guard's ignored SIGINT, SIGTERM and SIGHUP
    const std::string arg = "--name=" + name;
    execlp("scancel", "scancel", "--quiet", arg.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  for (int i = 0; i < 50; ++i) {
    if (waitpid(pid, nullptr, WNOHANG) == pid) return;
    sleep_ms(100);
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

[[noreturn]] void guard_main(int read_fd, const std::string& id) {
  // Detach from the terminal's signals: Ctrl-C is for ncclfi, which tears down itself.
  setsid();
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
  std::set<int> groups;
  std::set<std::string> slurm_jobs;
  std::string pending;
  char buf[256];
  for (;;) {
    const ssize_t n = read(read_fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // ncclfi is gone (or closed us on a clean exit)
    pending.append(buf, static_cast<size_t>(n));
    size_t nl;
    while ((nl = pending.find('\n')) != std::string::npos) {
      const std::string line = pending.substr(0, nl);
      pending.erase(0, nl + 1);
      if (line.size() > 1 && line[0] == '+') groups.insert(std::atoi(line.c_str() + 1));
      if (line.size() > 1 && line[0] == '-') groups.erase(std::atoi(line.c_str() + 1));
      if (line.size() > 1 && line[0] == 'S') slurm_jobs.insert(line.substr(1));
      if (line.size() > 1 && line[0] == 's') slurm_jobs.erase(line.substr(1));
    }
  }
  for (int g : groups) kill(-g, SIGTERM);
  signal_processes_with_harness_id(id, SIGTERM);
  for (const auto& job : slurm_jobs) scancel_job(job);
  sleep_ms(groups.empty() ? 100 : 1000);
  for (int g : groups) kill(-g, SIGKILL);
  signal_processes_with_harness_id(id, SIGKILL);
  _exit(0);
}

void send_line(const std::string& line) {
  if (g_guard_fd < 0) return;
  const std::string text = line + "\n";
  (void)!write(g_guard_fd, text.data(), text.size());
}

}  // namespace

const std::string& OrphanGuard::harness_id() {
  static const std::string id = make_harness_id();
  return id;
}

void OrphanGuard::start() {
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  const std::string& id = harness_id();
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return;
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return;
  }
  if (pid == 0) {
    close(fds[1]);
    // Close everything but the pipe, so the guard holds no log file, terminal or pipe open (a
    // reader of ncclfi's output must see EOF when ncclfi exits, not when the guard does).
    const int null = open("/dev/null", O_RDWR);
    for (int fd = 0; fd < 3; ++fd) dup2(null, fd);
    for (int fd = 3; fd < 1024; ++fd) {
      if (fd != fds[0]) close(fd);
    }
    guard_main(fds[0], id);
  }
  close(fds[0]);
  g_guard_fd = fds[1];
  signal(SIGPIPE, SIG_IGN);
}

void OrphanGuard::watch_group(int pgid) {
  send_line("+" + std::to_string(pgid));
}
void OrphanGuard::forget_group(int pgid) {
  send_line("-" + std::to_string(pgid));
}
void OrphanGuard::watch_slurm_job(const std::string& name) {
  send_line("S" + name);
}
void OrphanGuard::forget_slurm_job(const std::string& name) {
  send_line("s" + name);
}

int signal_processes_with_harness_id(const std::string& id, int sig) {
  int signalled = 0;
  for (int pid : job_pids(id)) signalled += ::kill(pid, sig) == 0 ? 1 : 0;
  return signalled;
}

}  // namespace ncclfi::cli
