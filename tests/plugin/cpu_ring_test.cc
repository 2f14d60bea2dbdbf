// ncclfi-cpu-ring end to end over the shim: clean runs verify, drop trips the watchdog within
// timeout + 1 s, corrupt fails verification, usage errors exit 64.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "plugin_test_util.h"

namespace ncclfi::plugin_test {
namespace {

int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

struct RingRun {
  std::vector<int> exit_codes;
  std::vector<nlohmann::json> events;
  double seconds = 0;
};

// Launches `ranks` ncclfi-cpu-ring processes with `args`, optionally under a plan; waits up to 60 s.
RingRun run_ring(int ranks, const std::vector<std::string>& args, const std::string& plan = "") {
  const std::string dir = write_temp_file("marker", "");
  const std::string events = dir + ".events.jsonl";
  const std::string port = std::to_string(free_port());
  const std::string exe = bin_dir() + "/ncclfi-cpu-ring";
  std::vector<pid_t> pids;
  const double t0 = now_ms();
  for (int r = 0; r < ranks; ++r) {
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
      setenv("RANK", std::to_string(r).c_str(), 1);
      setenv("WORLD_SIZE", std::to_string(ranks).c_str(), 1);
      setenv("MASTER_ADDR", "127.0.0.1", 1);
      setenv("MASTER_PORT", port.c_str(), 1);
      setenv("NCCLFI_EVENTS", events.c_str(), 1);
      if (!plan.empty()) setenv("NCCLFI_PLAN", plan.c_str(), 1);
      std::vector<char*> argv{const_cast<char*>(exe.c_str())};
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(exe.c_str(), argv.data());
      _exit(127);
    }
    pids.push_back(pid);
  }
  RingRun run;
  for (pid_t pid : pids) {
    int status = 0;
    for (;;) {
      if (waitpid(pid, &status, WNOHANG) == pid) break;
      if (now_ms() - t0 > 60000) {
        for (pid_t p : pids) kill(p, SIGKILL);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    run.exit_codes.push_back(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  }
  run.seconds = (now_ms() - t0) / 1000;
  std::stringstream lines(read_file(events));
  std::string line;
  while (std::getline(lines, line)) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_discarded()) run.events.push_back(j);
  }
  return run;
}

std::vector<nlohmann::json> of_kind(const RingRun& run, const std::string& event) {
  std::vector<nlohmann::json> out;
  for (const auto& e : run.events) {
    if (e.value("event", "") == event) out.push_back(e);
  }
  return out;
}

std::string plan_file(const nlohmann::json& fault) {
  return write_temp_file("plan.json", nlohmann::json{{"seed", 1}, {"faults", {fault}}}.dump());
}

TEST(CpuRing, CleanRunVerifiesEveryIteration) {
  const auto run =
      run_ring(3, {"--bytes", "256K", "--iters", "5", "--warmup", "1", "--check", "--timeout-s", "10"});
  EXPECT_EQ(run.exit_codes, (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(of_kind(run, "start").size(), 3u);
  EXPECT_EQ(of_kind(run, "op").size(), 18u);
  const auto done = of_kind(run, "done");
  ASSERT_EQ(done.size(), 3u);
  for (const auto& d : done) EXPECT_TRUE(d["verified"].get<bool>());
  for (const auto& op : of_kind(run, "op")) {
    EXPECT_EQ(op["bytes"], 256 * 1024);
    EXPECT_TRUE(op.contains("dur_us") && op.contains("seq"));
  }
  EXPECT_TRUE(of_kind(run, "inject").empty());
}

TEST(CpuRing, DropTripsTheWatchdogWithinTimeoutPlusOneSecond) {
  const std::string plan = plan_file({{"id", "drop1"},
                                      {"layer", "net"},
                                      {"kind", "drop"},
                                      {"target", {{"ranks", {1}}, {"direction", "recv"}}},
                                      {"trigger", {{"after_calls", 10}}}});
  const auto run = run_ring(4, {"--bytes", "1M", "--iters", "50", "--check", "--timeout-s", "2"}, plan);
  EXPECT_EQ(run.exit_codes[1], 3) << "the rank that lost a completion must abort through its watchdog";
  for (int code : run.exit_codes) EXPECT_TRUE(code == 3 || code == 2) << code;
  const auto inject = of_kind(run, "inject");
  ASSERT_EQ(inject.size(), 1u);
  const auto fired = of_kind(run, "watchdog_fired");
  ASSERT_FALSE(fired.empty());
  for (const auto& f : fired) {
    const double after_inject_s =
        static_cast<double>(f["mono_ns"].get<int64_t>() - inject[0]["mono_ns"].get<int64_t>()) / 1e9;
    EXPECT_LE(after_inject_s, 3.0) << f.dump();
    EXPECT_GE(f["waited_ms"].get<int64_t>(), 2000);
    EXPECT_LE(f["waited_ms"].get<int64_t>(), 3000);
    EXPECT_EQ(f["op"], "allreduce");
    EXPECT_TRUE(f.contains("seq"));
  }
  EXPECT_FALSE(of_kind(run, "abort").empty());
}

TEST(CpuRing, CorruptFailsVerificationWithCheck) {
  const std::string plan = plan_file({{"id", "c1"},
                                      {"layer", "net"},
                                      {"kind", "corrupt"},
                                      {"params", {{"bits", 2}}},
                                      {"target", {{"ranks", {2}}}},
                                      {"trigger", {{"after_calls", 4}}}});
  const auto run = run_ring(3, {"--bytes", "64K", "--iters", "10", "--check", "--timeout-s", "10"}, plan);
  EXPECT_EQ(run.exit_codes[2], 4);
  const auto mismatch = of_kind(run, "result_mismatch");
  ASSERT_FALSE(mismatch.empty());
  EXPECT_GE(mismatch[0]["wrong"].get<int>(), 1);
}

TEST(CpuRing, CorruptWithoutCheckFinishesAndReportsTheMismatch) {
  const std::string plan = plan_file({{"id", "c1"},
                                      {"layer", "net"},
                                      {"kind", "corrupt"},
                                      {"params", {{"bits", 1}}},
                                      {"target", {{"ranks", {0}}}},
                                      {"trigger", {{"after_calls", 2}}}});
  const auto run = run_ring(2, {"--bytes", "64K", "--iters", "4", "--timeout-s", "10"}, plan);
  EXPECT_EQ(run.exit_codes, (std::vector<int>{0, 0}));
  EXPECT_FALSE(of_kind(run, "result_mismatch").empty());
  bool some_unverified = false;
  for (const auto& d : of_kind(run, "done")) some_unverified |= !d["verified"].get<bool>();
  EXPECT_TRUE(some_unverified);
}

TEST(CpuRing, NetErrorExitsTwoWithNcclErrorEvent) {
  const std::string plan = plan_file({{"id", "e1"},
                                      {"layer", "net"},
                                      {"kind", "error"},
                                      {"params", {{"code", "ncclSystemError"}}},
                                      {"target", {{"ranks", {0}}}},
                                      {"trigger", {{"after_calls", 3}}}});
  const auto run = run_ring(2, {"--bytes", "64K", "--iters", "10", "--timeout-s", "5"}, plan);
  EXPECT_EQ(run.exit_codes[0], 2);
  const auto errors = of_kind(run, "nccl_error");
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors[0]["code"], 2);
}

TEST(CpuRing, UsageErrorsExit64) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--bytes", "12Q"}, {"--iters", "-1"}, {"--no-such-flag"}, {"--bytes", "3"}}) {
    const auto run = run_ring(1, args);
    EXPECT_EQ(run.exit_codes[0], 64) << args[0];
  }
}

}  // namespace
}  // namespace ncclfi::plugin_test
