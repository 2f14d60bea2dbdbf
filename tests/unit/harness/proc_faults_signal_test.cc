// The harness's proc layer on real processes: for every signal the validator accepts, a `proc kill`
// fault ends a child by exactly that signal; a `proc stop` fault stops it and its `ms` resumes it. The
// signals come from the core's table, so a signal added there without its effect fails here.
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "ncclfi/signals.h"
#include "proc_faults.h"
#include "scenario.h"

namespace ncclfi::cli {
namespace {

constexpr int64_t kMs = 1'000'000;

// Rank 0 is one forked child that waits with every signal at its default action, as a rank that
// installs no handlers does.
class ChildRank final : public RankSignaller {
 public:
  ChildRank() {
    int ready[2];
    if (pipe(ready) != 0) throw std::runtime_error("pipe");
    pid_ = fork();
    if (pid_ == 0) {
      for (int sig = 1; sig < NSIG; ++sig) ::signal(sig, SIG_DFL);
      sigset_t none;
      sigemptyset(&none);
      sigprocmask(SIG_SETMASK, &none, nullptr);
      const char byte = 1;
      (void)!write(ready[1], &byte, 1);
      for (;;) pause();
    }
    char byte = 0;
    (void)!read(ready[0], &byte, 1);
    close(ready[0]);
    close(ready[1]);
  }
  ~ChildRank() override {
    if (pid_ > 0 && !reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  int signal_rank(int rank, int sig, EventTime* sent) override {
    if (rank != 0) return 0;
    if (sent != nullptr) *sent = EventTime{1, 1};
    return kill(pid_, sig) == 0 ? 1 : 0;
  }
  std::set<int> running_ranks() override { return {0}; }
  void record_injection(const Fault&, int, const std::string& action, int sig, EventTime) override {
    recorded.emplace_back(action, sig);
  }
  // The child's next state change: WIFSIGNALED/WIFSTOPPED/WIFCONTINUED status.
  int wait_change() {
    int status = 0;
    waitpid(pid_, &status, WUNTRACED | WCONTINUED);
    reaped_ = WIFSIGNALED(status) || WIFEXITED(status);
    return status;
  }

  std::vector<std::pair<std::string, int>> recorded;

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
};

Scenario one_proc_fault(const nlohmann::json& fault) {
  Scenario s;
  s.workload.ranks = 1;
  s.plan = parse_plan(nlohmann::json{{"faults", {fault}}}, "plan.json");
  return s;
}

TEST(ProcFaultsOnRealProcesses, KillEndsTheProcessByEveryAcceptedSignal) {
  const rlimit no_cores{0, 0};
  setrlimit(RLIMIT_CORE, &no_cores);  // half of them dump core by default
  for (int sig : accepted_signal_numbers()) {
    const std::string name = signal_name(sig);
    const nlohmann::json value = name.rfind("SIGRTMIN", 0) == 0 ? nlohmann::json(sig) : nlohmann::json(name);
    ProcFaultSchedule schedule(
        one_proc_fault({{"id", "k"}, {"layer", "proc"}, {"kind", "kill"}, {"params", {{"signal", value}}}}));
    ChildRank child;
    schedule.fire_due(0, child);
    const int status = child.wait_change();
    ASSERT_TRUE(WIFSIGNALED(status)) << value.dump() << ": status " << status;
    EXPECT_EQ(WTERMSIG(status), sig) << value.dump();
    EXPECT_EQ(child.recorded, (std::vector<std::pair<std::string, int>>{{"kill", sig}})) << value.dump();
  }
}

TEST(ProcFaultsOnRealProcesses, StopStopsTheProcessAndMsResumesIt) {
  ProcFaultSchedule schedule(
      one_proc_fault({{"id", "s"}, {"layer", "proc"}, {"kind", "stop"}, {"params", {{"ms", 50}}}}));
  ChildRank child;
  schedule.fire_due(0, child);
  int status = child.wait_change();
  ASSERT_TRUE(WIFSTOPPED(status)) << status;
  EXPECT_EQ(WSTOPSIG(status), SIGSTOP);
  schedule.fire_due(49 * kMs, child);
  EXPECT_EQ(schedule.pending(), 1u) << "resumed before ms";
  schedule.fire_due(50 * kMs, child);
  status = child.wait_change();
  EXPECT_TRUE(WIFCONTINUED(status)) << status;
  EXPECT_EQ(schedule.pending(), 0u);
  EXPECT_EQ(child.recorded, (std::vector<std::pair<std::string, int>>{{"stop", SIGSTOP}}));
}

}  // namespace
}  // namespace ncclfi::cli
