// `agent --exec`'s signals: one sent with kill(2) is the rank's and is passed on; a fault of the wrapper
// itself (a real SIGSEGV) is not the rank's and ends the wrapper by that signal, at once, instead of
// running the faulting instruction again for ever.
#include <gtest/gtest.h>

#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent_protocol.h"
#include "agent_rank_exec.h"
#include "injection_relay.h"

namespace ncclfi::cli {
namespace {

namespace fs = std::filesystem;

// Runs exec_rank_and_report(argv) in a child of the test (the wrapper), after `before` ran there.
pid_t start_wrapper(const std::vector<std::string>& argv, const std::function<void()>& before) {
  const pid_t pid = fork();
  if (pid == 0) {
    before();
    _exit(exec_rank_and_report(argv));
  }
  return pid;
}

// The wrapper's raw wait status, or -1 when it had not ended after `timeout_s` (then it is killed).
int wait_status(pid_t pid, double timeout_s) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  int status = 0;
  while (std::chrono::steady_clock::now() < end) {
    if (waitpid(pid, &status, WNOHANG) == pid) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -1;
}

// The wrapper's child (the rank), once it runs `program`; 0 when it did not within 10 s.
pid_t rank_of_wrapper(pid_t wrapper, const std::string& program) {
  for (int i = 0; i < 1000; ++i) {
    std::ifstream children("/proc/" + std::to_string(wrapper) + "/task/" + std::to_string(wrapper) +
                           "/children");
    pid_t child = 0;
    if (children >> child) {
      std::error_code ec;
      const auto exe = fs::read_symlink("/proc/" + std::to_string(child) + "/exe", ec);
      if (!ec && fs::equivalent(exe, program, ec)) return child;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return 0;
}

// With node agents, the wrapper hands its program the injection channel its node's agent left in the
// spool (injection_relay.h), and only when the harness says the job has an injector; the flag itself
// goes no further than the wrapper.
TEST(AgentExec, HandsItsProgramTheNodesInjectionChannelOnlyWhenTheJobHasAnInjector) {
  const std::string dir = fs::temp_directory_path() / ("ncclfi-exec-channel-" + std::to_string(getpid()));
  const std::string spool = dir + "/spool";
  fs::create_directories(spool);
  {
    const NodeInjectionRelay relay(spool);
    const auto channel = node_injection_env(spool);
    ASSERT_EQ(channel.size(), 2u);
    for (const bool injector : {true, false}) {
      const std::string out = dir + "/seen-" + std::to_string(injector);
      const pid_t wrapper =
          start_wrapper({"/bin/sh", "-c",
                         "printf '%s|%s|%s' \"$NCCLFI_INJECT_SOCKET\" \"$NCCLFI_INJECT_KEY\" "
                         "\"${NCCLFI_INJECT_FROM_AGENT-unset}\" > " +
                             out},
                        [&] {
                          setenv(kAgentSpoolVar, spool.c_str(), 1);
                          setenv("NCCLFI_RANK", "0", 1);
                          unsetenv("NCCLFI_EVENTS");
                          unsetenv("NCCLFI_INJECT_SOCKET");
                          unsetenv("NCCLFI_INJECT_KEY");
                          if (injector) {
                            setenv(kInjectFromAgentVar, "1", 1);
                          } else {
                            unsetenv(kInjectFromAgentVar);
                          }
                        });
      const int status = wait_status(wrapper, 10);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
      std::ifstream seen(out);
      std::string text;
      std::getline(seen, text);
      EXPECT_EQ(text, injector ? channel.at("NCCLFI_INJECT_SOCKET") + "|" + channel.at("NCCLFI_INJECT_KEY") +
                                     "|unset"
                               : "||unset");
    }
  }
  fs::remove_all(dir);
}

TEST(AgentExec, PassesOnAKilledSigsegvAndDiesOfItsOwnFault) {
  // From outside: kill(wrapper, SIGSEGV) reaches the rank, which dies of it; the wrapper records that
  // (rank_exit) and ends the same way.
  const std::string dir = fs::temp_directory_path() / ("ncclfi-exec-signals-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string events = dir + "/events.jsonl";
  const pid_t sent_to = start_wrapper({"/bin/sleep", "30"}, [&] {
    setenv("NCCLFI_EVENTS", events.c_str(), 1);
    setenv("NCCLFI_RANK", "0", 1);
    unsetenv("NCCLFI_AGENT_SPOOL");
  });
  ASSERT_GT(rank_of_wrapper(sent_to, "/bin/sleep"), 0);
  kill(sent_to, SIGSEGV);
  const int sent_status = wait_status(sent_to, 10);
  ASSERT_NE(sent_status, -1) << "the wrapper did not end after its rank was passed SIGSEGV";
  EXPECT_TRUE(WIFSIGNALED(sent_status) && WTERMSIG(sent_status) == SIGSEGV) << sent_status;
  std::ifstream in(events);
  std::string line, rank_exit;
  while (std::getline(in, line))
    if (line.find("\"rank_exit\"") != std::string::npos) rank_exit = line;
  const auto e = nlohmann::json::parse(rank_exit, nullptr, false);
  ASSERT_TRUE(e.is_object()) << "no rank_exit event: " << rank_exit;
  EXPECT_EQ(e.value("signal", 0), SIGSEGV) << "the rank did not die of the SIGSEGV passed on: " << rank_exit;
  fs::remove_all(dir);

  // Its own fault: a write to a page it may not touch, from a thread, while it waits for a rank that
  // ignores SIGSEGV (so only the wrapper's own end can end the test in time).
  const pid_t faulty = start_wrapper({"/bin/sh", "-c", "trap '' SEGV; exec sleep 30"}, [] {
    unsetenv("NCCLFI_EVENTS");
    unsetenv("NCCLFI_AGENT_SPOOL");
    std::thread([] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      void* page = mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      *static_cast<volatile int*>(page) = 1;
    }).detach();
  });
  const int fault_status = wait_status(faulty, 5);
  ASSERT_NE(fault_status, -1) << "a real SIGSEGV in the wrapper hung it";
  EXPECT_TRUE(WIFSIGNALED(fault_status) && WTERMSIG(fault_status) == SIGSEGV) << fault_status;
}

}  // namespace
}  // namespace ncclfi::cli
