// The proc-fault schedule: when a kill or stop fires, counted from each rank's own launch.
#include "proc_faults.h"

#include <gtest/gtest.h>
#include <signal.h>

#include "scenario.h"

namespace ncclfi::cli {
namespace {

constexpr int64_t kMs = 1'000'000;

// A job whose ranks appear when the test says so, and that records every signal.
class FakeJob final : public RankSignaller {
 public:
  std::set<int> running;
  std::vector<std::pair<int, int>> signals;  // (rank, signal)
  std::vector<std::string> injections;
  std::set<int> refusing;  // ranks whose host refuses (outside the allow-list)
  int asked = 0;

  int signal_rank(int rank, int sig, EventTime* sent) override {
    ++asked;
    if (running.count(rank) == 0) return 0;
    if (refusing.count(rank) != 0) return kSignalRefused;
    if (sent != nullptr) *sent = EventTime{1000 + static_cast<int64_t>(signals.size()), 0};
    signals.emplace_back(rank, sig);
    return 1;
  }
  std::set<int> running_ranks() override { return running; }
  void record_injection(const Fault& fault, int rank, const std::string& action, int, EventTime at) override {
    injections.push_back(fault.id + ":" + std::to_string(rank) + ":" + action + "@" +
                         std::to_string(at.wall_ns));
  }
};

Scenario with_faults(nlohmann::json faults, int ranks = 4) {
  const nlohmann::json doc = {{"name", "proc-schedule"},
                              {"summary", "proc faults"},
                              {"workload", {{"builtin", "cpu-ring"}, {"ranks", ranks}}},
                              {"faults", faults},
                              {"deadline_s", 60},
                              {"expect", {{"outcome", "detected"}}}};
  return scenario_from_json(doc, "proc-schedule.json");
}

TEST(ProcFaultSchedule, KillCountsFromTheRanksOwnLaunchNotTheLaunchers) {
  const Scenario s = with_faults(nlohmann::json::array({{{"id", "crash"},
                                                         {"layer", "proc"},
                                                         {"kind", "kill"},
                                                         {"target", {{"ranks", {3}}}},
                                                         {"trigger", {{"after_ms", 1500}}}}}));
  ProcFaultSchedule schedule(s);
  FakeJob job;
  // srun is slow: rank 3 only appears 2 s after the launcher started.
  for (int64_t t = 0; t < 2000 * kMs; t += 5 * kMs) schedule.fire_due(t, job);
  EXPECT_TRUE(job.signals.empty()) << "fired before rank 3 existed";
  job.running = {0, 1, 2, 3};
  schedule.fire_due(2000 * kMs, job);  // seen here: due at 3.5 s
  schedule.fire_due(3400 * kMs, job);
  EXPECT_TRUE(job.signals.empty()) << "launcher time + after_ms, not the rank's launch + after_ms";
  schedule.fire_due(3500 * kMs, job);
  ASSERT_EQ(job.signals.size(), 1u);
  EXPECT_EQ(job.signals[0], std::make_pair(3, SIGKILL));
  // Logged at the time the signal went out, not when the harness got round to writing it.
  EXPECT_EQ(job.injections, std::vector<std::string>{"crash:3:kill@1000"});
  EXPECT_EQ(schedule.pending(), 0u);
}

// A rank on a host outside the drill's allow-list: its agent refuses once; the schedule records no
// injection and does not ask again (a retry every poll would flood that agent and its log).
TEST(ProcFaultSchedule, ARefusedSignalIsNeitherRecordedNorRetried) {
  const Scenario s = with_faults(nlohmann::json::array({{{"id", "crash"},
                                                         {"layer", "proc"},
                                                         {"kind", "kill"},
                                                         {"target", {{"ranks", {2, 3}}}},
                                                         {"trigger", {{"after_ms", 100}}}}}));
  ProcFaultSchedule schedule(s);
  FakeJob job;
  job.running = {0, 1, 2, 3};
  job.refusing = {2};
  schedule.fire_due(0, job);
  for (int64_t t = 100 * kMs; t < 1000 * kMs; t += 5 * kMs) schedule.fire_due(t, job);
  EXPECT_EQ(job.asked, 2);  // rank 2 once (refused), rank 3 once (killed)
  EXPECT_EQ(job.signals, (std::vector<std::pair<int, int>>{{3, SIGKILL}}));
  EXPECT_EQ(job.injections, std::vector<std::string>{"crash:3:kill@1000"});
  EXPECT_EQ(schedule.pending(), 0u);
}

TEST(ProcFaultSchedule, EachTargetedRankHasItsOwnClock) {
  const Scenario s = with_faults(nlohmann::json::array({{{"id", "freeze"},
                                                         {"layer", "proc"},
                                                         {"kind", "stop"},
                                                         {"params", {{"ms", 300}}},
                                                         {"target", {{"ranks", {1, 2}}}},
                                                         {"trigger", {{"after_ms", 100}}}}}));
  ProcFaultSchedule schedule(s);
  FakeJob job;
  job.running = {1};
  schedule.fire_due(0, job);
  job.running = {1, 2};
  schedule.fire_due(500 * kMs, job);  // rank 1 is due (100 ms) and stops; rank 2 is seen now
  ASSERT_EQ(job.signals.size(), 1u);
  EXPECT_EQ(job.signals[0], std::make_pair(1, SIGSTOP));
  schedule.fire_due(600 * kMs, job);  // rank 2 stops 100 ms after it was seen
  ASSERT_EQ(job.signals.size(), 2u);
  EXPECT_EQ(job.signals[1], std::make_pair(2, SIGSTOP));
  schedule.fire_due(800 * kMs, job);  // rank 1 resumes 300 ms after its stop
  ASSERT_EQ(job.signals.size(), 3u);
  EXPECT_EQ(job.signals[2], std::make_pair(1, SIGCONT));
  schedule.release_stopped(job);  // the attempt ends: rank 2 is not left stopped
  EXPECT_EQ(job.signals.back(), std::make_pair(2, SIGCONT));
}

TEST(ProcFaultSchedule, DisarmedFaultsAndOtherLayersAreNotScheduled) {
  const Scenario s = with_faults(nlohmann::json::array(
      {{{"id", "later"},
        {"layer", "proc"},
        {"kind", "kill"},
        {"target", {{"ranks", {0}}}},
        {"trigger", {{"armed", false}}}},
       {{"id", "slow"}, {"layer", "net"}, {"kind", "delay"}, {"params", {{"ms", 5}}}}}));
  ProcFaultSchedule schedule(s);
  EXPECT_EQ(schedule.pending(), 0u);
}

}  // namespace
}  // namespace ncclfi::cli
