#include "agent_rank_exec.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>

#include "agent_protocol.h"
#include "child_signals.h"
#include "injection_relay.h"
#include "ncclfi/event_log.h"
#include "ncclfi/params.h"
#include "rank_output_tail.h"

namespace ncclfi::cli {
namespace {

volatile sig_atomic_t g_child = 0;

// A signal some process sent with kill(2), sigqueue(3) or tgkill(2) (si_code <= 0) is meant for the rank
// and passed on. One the kernel raised for this wrapper's own doing (si_code > 0: a fault of its own)
// is not the rank's: a fault takes the default action, here and now (returning from the handler would
// run the faulting instruction again, for ever); any other (a terminal's SIGHUP) already reached the
// rank, which is in this wrapper's process group.
void pass_on(int sig, siginfo_t* info, void*) {
  if (info != nullptr && info->si_code > 0) {
    if (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGTRAP) {
      ::signal(sig, SIG_DFL);
      ::raise(sig);  // delivered when the handler returns, if the faulting instruction does not fault first
    }
    return;
  }
  // A SIGPIPE the kernel sent this wrapper for its own write to a closed stdout is not the rank's (it
  // comes as SI_USER from the wrapper itself).
  if (sig == SIGPIPE && info != nullptr && info->si_code == SI_USER && info->si_pid == ::getpid()) return;
  if (g_child > 0) ::kill(g_child, sig);
}

// The rank's stdout and stderr: each read is copied at once, unchanged, to this wrapper's own (what the
// launcher forwards and the harness classifies), and line by line into the node's spool
// (rank_output_tail.h), until the program ended and the pipes are drained. A stream this wrapper can
// no longer write to is still drained, so the program never blocks on it.
class OutputCopy {
 public:
  OutputCopy(int out_fd, int err_fd, const std::string& spool_path) : spool_(spool_path) {
    fds_[0] = out_fd;
    fds_[1] = err_fd;
    for (int fd : fds_) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  }
  ~OutputCopy() {
    for (int fd : fds_)
      if (fd >= 0) ::close(fd);
  }

  // Copies what arrives within `wait_ms`; false once both pipes are closed.
  bool pump(int wait_ms) {
    pollfd pfds[2] = {{fds_[0], POLLIN, 0}, {fds_[1], POLLIN, 0}};
    if (fds_[0] < 0 && fds_[1] < 0) return false;
    if (::poll(pfds, 2, wait_ms) <= 0) return true;
    for (int i = 0; i < 2; ++i)
      if (pfds[i].revents != 0) read_stream(i);
    return fds_[0] >= 0 || fds_[1] >= 0;
  }
  // What is left in the pipes now, up to kMaxDrainReads reads a stream: a process the program started
  // may hold them open (and keep writing), and is not waited for.
  void drain() {
    constexpr int kMaxDrainReads = 64;
    for (int i = 0; i < 2; ++i)
      for (int n = 0; n < kMaxDrainReads && fds_[i] >= 0 && read_stream(i); ++n) {
      }
    spool_.close();
  }
  const SpoolOutputFile& spool() const { return spool_; }

 private:
  // One read of stream `i`; false when there was nothing (or it closed).
  bool read_stream(int i) {
    char buf[64 << 10];
    const ssize_t n = ::read(fds_[i], buf, sizeof buf);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
      ::close(fds_[i]);
      fds_[i] = -1;
      return false;
    }
    if (n < 0) return false;
    copy_out(i + 1, buf, static_cast<size_t>(n));
    spool_.feed(i, buf, static_cast<size_t>(n));
    return true;
  }
  void copy_out(int fd, const char* data, size_t n) {
    if (broken_[fd - 1]) return;
    while (n > 0) {
      const ssize_t w = ::write(fd, data, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        broken_[fd - 1] = true;
        return;
      }
      data += w;
      n -= static_cast<size_t>(w);
    }
  }
  int fds_[2];
  bool broken_[2] = {false, false};
  SpoolOutputFile spool_;
};

// Every signal a launcher, a teardown or a proc fault may send the rank (SIGKILL and SIGSTOP cannot be
// caught: a SIGKILLed wrapper takes its child along through PR_SET_PDEATHSIG).
constexpr int kPassedOn[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCONT, SIGABRT,
                             SIGSEGV, SIGBUS, SIGFPE, SIGILL,  SIGTRAP, SIGALRM, SIGPIPE};

}  // namespace

int exec_rank_and_report(const std::vector<std::string>& argv) {
  if (argv.empty()) return 2;
  // The rank's output goes through this wrapper only where an agent can read its copy.
  const char* spool = std::getenv(kAgentSpoolVar);
  const bool capture = spool != nullptr && *spool != '\0';
  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  if (capture && (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0)) {
    std::perror("ncclfi agent --exec: pipe");
    return 3;
  }
  // The node's injection channel, for the program's environment only (injection_relay.h): this wrapper
  // keeps neither in its own, which /proc shows for as long as it runs.
  std::map<std::string, std::string> channel;
  const char* from_agent = std::getenv(kInjectFromAgentVar);
  if (capture && from_agent != nullptr && std::string(from_agent) == "1") channel = node_injection_env(spool);
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0) {
    std::perror("ncclfi agent --exec: fork");
    return 3;
  }
  if (child == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) _exit(137);  // the wrapper died before prctl took effect
    reset_signals_in_child();               // not ncclfi's ignored SIGPIPE
    if (capture && (::dup2(out_pipe[1], 1) < 0 || ::dup2(err_pipe[1], 2) < 0)) _exit(127);
    ::unsetenv(kInjectFromAgentVar);
    for (const auto& [name, value] : channel) ::setenv(name.c_str(), value.c_str(), 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    std::perror(("ncclfi agent --exec: " + argv[0]).c_str());
    _exit(127);
  }
  g_child = child;
  struct sigaction sa {};
  sa.sa_sigaction = pass_on;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART | SA_SIGINFO;
  for (int sig : kPassedOn) ::sigaction(sig, &sa, nullptr);
  int status = 0;
  std::unique_ptr<OutputCopy> output;
  if (capture) {
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    output = std::make_unique<OutputCopy>(out_pipe[0], err_pipe[0],
                                          spool_output_path(spool, resolve_rank_from_env()));
  }
  // Output is copied as it arrives; the program's end is looked for between reads (at most kWaitMs late).
  constexpr int kWaitMs = 50;
  while (true) {
    const pid_t done = ::waitpid(child, &status, output ? WNOHANG : 0);
    if (done == child) break;
    if (done < 0 && errno != EINTR) break;
    if (output && !output->pump(kWaitMs)) {
      while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
      }
      break;
    }
  }
  if (output) output->drain();
  const char* events = std::getenv("NCCLFI_EVENTS");
  if (events != nullptr && *events != '\0') {
    nlohmann::json fields = {{"pid", child}};
    if (output) {  // what of its output the node's spool could not keep (the agent's tail reports it)
      fields["output_lines"] = output->spool().lines();
      fields["output_skipped_lines"] = output->spool().skipped_lines();
      fields["output_skipped_bytes"] = output->spool().skipped_bytes();
      fields["output_cut_lines"] = output->spool().cut_lines();
    }
    if (WIFEXITED(status)) fields["exit_code"] = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) fields["signal"] = WTERMSIG(status);
    EventLog(events, "agent").write_for_rank(resolve_rank_from_env(), "rank_exit", fields);
  }
  if (WIFSIGNALED(status)) {  // end as the rank ended: its launcher reports the same fate
    ::signal(WTERMSIG(status), SIG_DFL);
    ::raise(WTERMSIG(status));
    return 128 + WTERMSIG(status);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace ncclfi::cli
