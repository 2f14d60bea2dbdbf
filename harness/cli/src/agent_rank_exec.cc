#include "agent_rank_exec.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "ncclfi/event_log.h"
#include "ncclfi/params.h"

namespace ncclfi::cli {
namespace {

volatile sig_atomic_t g_child = 0;

void pass_on(int sig) {
  if (g_child > 0) ::kill(g_child, sig);
}

// Every signal a launcher, a teardown or a proc fault may send the rank (SIGKILL and SIGSTOP cannot be
// caught: a SIGKILLed wrapper takes its child along through PR_SET_PDEATHSIG).
constexpr int kPassedOn[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCONT, SIGABRT,
                             SIGSEGV, SIGBUS, SIGFPE, SIGILL,  SIGTRAP, SIGALRM, SIGPIPE};

}  // namespace

int exec_rank_and_report(const std::vector<std::string>& argv) {
  if (argv.empty()) return 2;
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0) {
    std::perror("ncclfi agent --exec: fork");
    return 3;
  }
  if (child == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) _exit(137);  // the wrapper died before prctl took effect
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    std::perror(("ncclfi agent --exec: " + argv[0]).c_str());
    _exit(127);
  }
  g_child = child;
  struct sigaction sa {};
  sa.sa_handler = pass_on;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int sig : kPassedOn) ::sigaction(sig, &sa, nullptr);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  const char* events = std::getenv("NCCLFI_EVENTS");
  if (events != nullptr && *events != '\0') {
    nlohmann::json fields = {{"pid", child}};
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
