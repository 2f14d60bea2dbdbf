// Runtime control through libfiu's remote-control FIFOs. `ncclfi arm|disarm` writes the commands
// itself instead of running fiu-ctrl, because fiu-ctrl blocks for ever on the FIFO of a process that
// has died; here every step has a timeout and dead processes are skipped.
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include <fiu-control.h>

#include "ncclfi/event_log.h"
#include "ncclfi/injector.h"

namespace ncclfi {
namespace {

// A process that has exited but was not yet reaped (state Z or X in /proc/PID/stat) still answers
// kill(pid, 0); it holds no descriptors any more, so it counts as gone. A rank torn down while a
// command is under way passes through this state: that is a dead rank, not an impostor.
bool process_alive(pid_t pid) {
  if (::kill(pid, 0) != 0 && errno != EPERM) return false;
  std::string stat(512, '\0');
  const int fd = ::open(("/proc/" + std::to_string(pid) + "/stat").c_str(), O_RDONLY | O_CLOEXEC);
  const ssize_t got = fd < 0 ? 0 : ::read(fd, stat.data(), stat.size());
  if (fd >= 0) ::close(fd);
  stat.resize(got > 0 ? static_cast<size_t>(got) : 0);
  const auto paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 2 >= stat.size()) return true;  // no /proc: trust kill()
  const char state = stat[paren + 2];
  return state != 'Z' && state != 'X';
}

enum class Reply { kAck, kNoReader, kTimeout, kRefused };

// A control FIFO is a file a rank can reach (it sits in the run directory), so nothing is opened through
// a symlink, and only a FIFO that belongs to the caller's user counts: a planted symlink would have the
// command written over its target, a planted regular file would read as an acknowledgement.
bool own_fifo(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode) && st.st_uid == ::geteuid();
}

// True when process `pid` holds the FIFO open as `fd` (the rank that was asked, not a process that
// made a FIFO in its name): one of /proc/PID/fd is the same file.
bool held_by(pid_t pid, int fd) {
  struct stat mine {};
  if (::fstat(fd, &mine) != 0) return false;
  const std::string fds = "/proc/" + std::to_string(pid) + "/fd";
  DIR* dir = ::opendir(fds.c_str());
  if (dir == nullptr) return false;
  bool held = false;
  while (dirent* entry = ::readdir(dir)) {
    struct stat st {};
    if (entry->d_name[0] == '.' || ::stat((fds + "/" + entry->d_name).c_str(), &st) != 0) continue;
    if (st.st_dev == mine.st_dev && st.st_ino == mine.st_ino) {
      held = true;
      break;
    }
  }
  ::closedir(dir);
  return held;
}

Reply send_one(const std::string& prefix, pid_t pid, const std::string& command, int timeout_ms) {
  // The rc thread blocks opening `.in` for reading; without a reader, a non-blocking open for writing
  // fails at once with ENXIO, which is how a dead or wedged process is told apart without hanging.
  int out_fd = ::open((prefix + ".out").c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
  if (out_fd < 0) return errno == ELOOP ? Reply::kRefused : Reply::kNoReader;
  if (!own_fifo(out_fd)) {
    ::close(out_fd);
    return Reply::kRefused;
  }
  int in_fd = -1;
  int64_t deadline = Clock::mono_ns() + static_cast<int64_t>(timeout_ms) * 1000000;
  while ((in_fd = ::open((prefix + ".in").c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW)) < 0) {
    const int open_errno = errno;
    // No reader: the rc thread is between two commands, or the rank is being torn down. A rank that
    // dies meanwhile is gone (nothing left to disarm); only a living one that never reads times out.
    if (open_errno != ENXIO || Clock::mono_ns() > deadline || !process_alive(pid)) {
      ::close(out_fd);
      if (open_errno == ELOOP) return Reply::kRefused;
      return open_errno == ENXIO && process_alive(pid) ? Reply::kTimeout : Reply::kNoReader;
    }
    ::usleep(2000);  // the rc thread is between two commands: it reopens `.in` shortly
  }
  // The open succeeded, so a reader is opening `.in`: it must be the process the name says. Its open
  // returns, and the descriptor shows in /proc, a moment after ours.
  bool asked = own_fifo(in_fd) && held_by(pid, in_fd);
  while (!asked && own_fifo(in_fd) && process_alive(pid) && Clock::mono_ns() < deadline) {
    ::usleep(1000);
    asked = held_by(pid, in_fd);
  }
  if (!asked) {
    ::close(in_fd);
    ::close(out_fd);
    // The named rank died while we asked (its descriptors close as it exits, before our check saw
    // them): nothing is left to disarm. Only a living process that does not hold the FIFO is refused.
    return process_alive(pid) ? Reply::kRefused : Reply::kNoReader;
  }
  std::string line = command + "\n";
  ssize_t n = ::write(in_fd, line.data(), line.size());
  ::close(in_fd);
  if (n != static_cast<ssize_t>(line.size())) {
    ::close(out_fd);
    return Reply::kNoReader;
  }
  std::string reply;
  while (reply.find('\n') == std::string::npos) {
    int64_t left_ms = (deadline - Clock::mono_ns()) / 1000000;
    if (left_ms <= 0) break;
    if (!process_alive(pid)) {  // took the command and died before answering: gone, nothing to wait for
      ::close(out_fd);
      return Reply::kNoReader;
    }
    pollfd pfd{out_fd, POLLIN, 0};
    int r = ::poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left_ms, 20)));
    if (r <= 0) continue;
    char buf[64];
    ssize_t got = ::read(out_fd, buf, sizeof(buf));
    if (got > 0) {
      reply.append(buf, static_cast<size_t>(got));
    } else if (got == 0) {
      ::usleep(1000);  // writer not there yet (or gone); poll again until the deadline
    }
  }
  ::close(out_fd);
  if (reply.find('\n') == std::string::npos) return Reply::kTimeout;
  return Reply::kAck;  // 0 = done; -1 = e.g. disabling a point that was not enabled: answered either way
}

// The pid in `ncclfi-<source>-<pid><suffix>`, or 0 when `name` is not such a FIFO name.
pid_t control_fifo_pid(const std::string& name, const char* suffix) {
  const size_t n = std::strlen(suffix);
  if (name.rfind("ncclfi-", 0) != 0 || name.size() < 7 + n || name.compare(name.size() - n, n, suffix) != 0)
    return 0;
  const std::string stem = name.substr(0, name.size() - n);
  const auto dash = stem.rfind('-');
  if (dash == std::string::npos) return 0;
  const long pid = std::strtol(stem.c_str() + dash + 1, nullptr, 10);
  return pid > 0 ? static_cast<pid_t>(pid) : 0;
}

}  // namespace

int remove_dead_control_fifos(const std::string& run_dir) {
  DIR* dir = ::opendir(run_dir.c_str());
  if (dir == nullptr) return 0;
  int removed = 0;
  while (dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    pid_t pid = control_fifo_pid(name, ".in");
    if (pid == 0) pid = control_fifo_pid(name, ".out");
    if (pid == 0 || process_alive(pid)) continue;
    std::string path = run_dir;
    path.append("/").append(name);
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode) && ::unlink(path.c_str()) == 0) ++removed;
  }
  ::closedir(dir);
  return removed;
}

bool open_control_fifo(const std::string& run_dir, const std::string& source) {
  ensure_fiu_initialised();
  std::string base = run_dir + "/ncclfi-" + source;
  return fiu_rc_fifo(base.c_str()) == 0;
}

ControlResult send_control(const std::string& run_dir, const std::string& fault_id, bool arm,
                           int timeout_ms) {
  ControlResult result;
  DIR* dir = ::opendir(run_dir.c_str());
  if (dir == nullptr) return result;
  std::string command = std::string(arm ? "enable" : "disable") + " name=ncclfi/fault/" + fault_id;
  while (dirent* entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    const pid_t pid = control_fifo_pid(name, ".in");
    if (pid == 0) continue;
    std::string stem = name.substr(0, name.size() - 3);
    if (!process_alive(pid)) {
      ++result.skipped_dead;
      continue;
    }
    std::string prefix = run_dir;
    prefix.append("/").append(stem);
    switch (send_one(prefix, pid, command, timeout_ms)) {
      case Reply::kAck:
        ++result.acknowledged;
        break;
      case Reply::kNoReader:
        ++result.skipped_dead;
        break;
      case Reply::kTimeout:
        ++result.timed_out;
        break;
      case Reply::kRefused:
        ++result.refused;
        break;
    }
  }
  ::closedir(dir);
  return result;
}

}  // namespace ncclfi
