// The attempt loop times its deadline on the monotonic clock: a wall clock that jumps (NTP, an
// operator, a VM resumed) must neither end a healthy attempt nor keep a hung one past its deadline.
// A fake clock moves one of the two clocks an hour ahead right after the attempt starts; the loop
// must follow the monotonic one and ignore the wall one.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>

#include "attempt_runner.h"
#include "unit_temp_dir.h"

namespace ncclfi::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int64_t kHourNs = 3600LL * 1'000'000'000;

// The system's clocks, with `wall_jump_ns` added to the wall clock and `mono_jump_ns` to the monotonic
// one from the second reading on (the first is the attempt's start).
class JumpingClock final : public AttemptClock {
 public:
  JumpingClock(int64_t wall_jump_ns, int64_t mono_jump_ns)
      : wall_jump_ns_(wall_jump_ns), mono_jump_ns_(mono_jump_ns) {}
  EventTime now() const override {
    EventTime t = EventTime::now();
    if (readings_++ > 0) {
      t.wall_ns += wall_jump_ns_;
      t.mono_ns += mono_jump_ns_;
    }
    return t;
  }

 private:
  int64_t wall_jump_ns_, mono_jump_ns_;
  mutable std::atomic<int> readings_{0};
};

using ncclfi::test_support::TempDir;

Scenario one_rank_shell_job(const std::string& shell, double deadline_s) {
  const json doc = {{"name", "clock"},
                    {"summary", "one rank running a shell command"},
                    {"workload", {{"command", {"/bin/sh", "-c", shell}}, {"ranks", 1}}},
                    {"launcher", {{"kind", "command"}}},
                    {"baseline", false},
                    {"deadline_s", deadline_s},
                    {"grace_s", 0.5},
                    {"expect", {{"outcome", "clean"}}}};
  return scenario_from_json(doc, "clock.json");
}

struct Attempt {
  AttemptResult result;
  harness::History history;
  double seconds = 0;  // measured by the test on the steady clock
};

Attempt run_with_clock(const Scenario& s, const AttemptClock& clock) {
  TempDir dir;
  const auto classifier = harness::LogClassifier::builtin();
  const auto launcher = make_launcher(s.launcher.kind);
  AttemptInputs in;
  in.ctx.scenario = &s;
  in.ctx.run_dir = dir.path;
  in.ctx.log_dir = dir.path + "/attempt-0";
  fs::create_directories(in.ctx.log_dir);
  in.ctx.plan_path = dir.path + "/plan.json";
  in.ctx.events_path = dir.path + "/events.jsonl";
  in.ctx.harness_id = "clock-test-" + std::to_string(getpid());
  in.ctx.parent_env = current_environment();
  in.launcher = launcher.get();
  in.classifier = &classifier;
  in.log_dir_rel = "attempt-0";
  in.clock = &clock;
  Attempt a;
  a.history.world_size = 1;
  const auto start = std::chrono::steady_clock::now();
  a.result = run_attempt(in, a.history);
  a.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return a;
}

TEST(AttemptClock, WallClockJumpingAnHourAheadDoesNotEndTheAttempt) {
  const Scenario s = one_rank_shell_job("sleep 0.3; exit 0", 20);
  const JumpingClock clock(kHourNs, 0);
  const Attempt a = run_with_clock(s, clock);
  EXPECT_FALSE(a.result.deadline_hit) << "the deadline followed the wall clock";
  EXPECT_FALSE(a.result.failed);
  ASSERT_EQ(a.history.exits.size(), 1u);
  EXPECT_EQ(a.history.exits[0].exit_code, 0);
  EXPECT_FALSE(a.history.exits[0].killed_by_harness);
}

TEST(AttemptClock, MonotonicClockPassingTheDeadlineEndsTheAttempt) {
  const Scenario s = one_rank_shell_job("exec sleep 30", 20);
  const JumpingClock clock(0, kHourNs);
  const Attempt a = run_with_clock(s, clock);
  EXPECT_TRUE(a.result.deadline_hit) << "the deadline did not follow the monotonic clock";
  EXPECT_LT(a.seconds, 10) << "the attempt waited for the real deadline instead of the clock's";
  ASSERT_EQ(a.history.exits.size(), 1u);
  EXPECT_TRUE(a.history.exits[0].killed_by_harness);
}

TEST(AttemptClock, TimesOnTheTimelineStayOnTheWallClock) {
  const Scenario s = one_rank_shell_job("exit 0", 20);
  const JumpingClock clock(kHourNs, 0);
  const Attempt a = run_with_clock(s, clock);
  ASSERT_EQ(a.history.exits.size(), 1u);
  // Readings after the start carry the wall jump: the exit is stamped with the (jumped) wall clock,
  // never with the monotonic one, which counts from boot.
  EXPECT_GE(a.history.exits[0].ts_ns - a.result.start_ns, kHourNs);
}

}  // namespace
}  // namespace ncclfi::cli
