// Drill safety in the harness: the blast radius and its limits, the allow-list before launch, the dry
// run's plan, and proc faults that inject, heal and inject again (windows).
#include <gtest/gtest.h>
#include <signal.h>

#include "drill_plan.h"
#include "ncclfi/event_log.h"
#include "proc_faults.h"
#include "scenario.h"

namespace ncclfi::cli {
namespace {

constexpr int64_t kMs = 1'000'000;

nlohmann::json drill(nlohmann::json faults, nlohmann::json extra = nlohmann::json::object()) {
  nlohmann::json doc = {
      {"name", "drill"},  {"summary", "a drill"}, {"workload", {{"builtin", "cpu-ring"}, {"ranks", 4}}},
      {"faults", faults}, {"deadline_s", 60},     {"expect", {{"outcome", "detected"}}}};
  doc.update(extra);
  return doc;
}

nlohmann::json kill(const std::string& id, nlohmann::json ranks) {
  return {{"id", id}, {"layer", "proc"}, {"kind", "kill"}, {"target", {{"ranks", ranks}}}};
}

std::string load_error(const nlohmann::json& doc) {
  try {
    scenario_from_json(doc, "drills/x.json");
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "no error";
}

TEST(BlastRadius, TheScenarioLimitIsCheckedBeforeLaunchNamingFileAndField) {
  const auto doc = drill({kill("a", {1}), kill("b", {1, 2})}, {{"limits", {{"max_faulted_ranks", 1}}}});
  EXPECT_EQ(load_error(doc),
            "drills/x.json: /limits/max_faulted_ranks: expected at most 1 faulted ranks (drill limit), got 2 "
            "(ranks "
            "1, 2 by faults a, b)");
  EXPECT_EQ(load_error(drill({kill("a", {1})}, {{"limits", {{"max_faulted_ranks", 1}}}})), "no error");
  // "all" reaches every rank; the ranks of a local job are on this host.
  const auto all = drill({kill("a", "all")}, {{"limits", {{"max_faulted_ranks", 3}}}});
  EXPECT_NE(load_error(all).find("got 4 (ranks 0, 1, 2, 3 by faults a)"), std::string::npos);
  EXPECT_NE(load_error(drill({kill("a", {1})}, {{"limits", {{"max_faulted_ranks", 0}}}}))
                .find("/limits/max_faulted_ranks"),
            std::string::npos);
  EXPECT_NE(load_error(drill({kill("a", {1})}, {{"limits", {{"max_ranks", 1}}}})).find("/limits/max_ranks"),
            std::string::npos);
}

TEST(BlastRadius, HostsPlacedByTheLauncherCountOneEach) {
  auto doc = drill({kill("a", {0, 1, 2})}, {{"launcher", {{"kind", "srun"}}}});
  const Scenario s = scenario_from_json(doc, "x.json");
  const BlastRadius radius = blast_radius(s);
  EXPECT_EQ(radius.unknown_host_ranks, 3);
  EXPECT_EQ(radius.host_count(), 3);
  std::vector<ScenarioError::Problem> problems;
  check_blast_radius(s, {std::nullopt, 2}, problems);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].pointer, "--max-faulted-hosts");
  EXPECT_NE(problems[0].found.find("placed by the launcher"), std::string::npos);
  const Scenario local = scenario_from_json(drill({kill("a", {0, 1, 2})}), "x.json");
  EXPECT_EQ(blast_radius(local).host_count(), 1);  // every local rank runs here
  problems.clear();
  check_blast_radius(local, {2, 1}, problems);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].pointer, "--max-faulted-ranks");
}

TEST(AllowListBeforeLaunch, AHostOutsideTheListIsRefused) {
  const Scenario s = scenario_from_json(drill({kill("a", {1})}), "x.json");
  EXPECT_EQ(allow_list_refusal(s, AllowList{}), "");
  EXPECT_EQ(allow_list_refusal(s, parse_allow_list(host_name())), "");
  const std::string why = allow_list_refusal(s, parse_allow_list("staging-*"));
  EXPECT_EQ(why, "host '" + host_name() + "' of a faulted rank is not in the allowed hosts (staging-*)");
}

TEST(DryRun, EveryRankOfEveryHostWithWhatAndWhen) {
  const auto doc =
      drill({{{"id", "flap"},
              {"layer", "net"},
              {"kind", "stall"},
              {"params", {{"ms", 800}}},
              {"target", {{"ranks", {1}}, {"direction", "recv"}}},
              {"trigger", {{"after_calls", 20}, {"duration_s", 1}, {"every_s", 2}, {"times", 3}}}},
             {{"id", "freeze"},
              {"layer", "proc"},
              {"kind", "stop"},
              {"target", {{"ranks", {3}}}},
              {"trigger", {{"after_ms", 1500}, {"duration_s", 5}}}}},
            {{"limits", {{"max_faulted_ranks", 2}}}});
  const Scenario s = scenario_from_json(doc, "x.json");
  const auto plan = dry_run_json(s, AllowList{}, {});
  EXPECT_EQ(plan["launched"], false);
  EXPECT_EQ(plan["faulted_ranks"], nlohmann::json({1, 3}));
  EXPECT_EQ(plan["faulted_hosts"], 1);
  ASSERT_EQ(plan["hosts"].size(), 1u);
  EXPECT_EQ(plan["hosts"][0]["host"], host_name());
  const auto& ranks = plan["hosts"][0]["ranks"];
  ASSERT_EQ(ranks.size(), 4u);
  EXPECT_TRUE(ranks[0]["faults"].empty());
  const auto& flap = ranks[1]["faults"][0];
  EXPECT_EQ(flap["fault_id"], "flap");
  EXPECT_EQ(flap["points"], nlohmann::json({"net/isend", "net/irecv"}));
  EXPECT_EQ(flap["when"], "from matching call 20, at most 1 firing(s) per window");
  EXPECT_EQ(flap["windows_total"], 3);
  EXPECT_EQ(flap["windows"][2]["opens_s"], 4.0);
  EXPECT_EQ(flap["windows"][2]["closes_s"], 5.0);
  const auto& freeze = ranks[3]["faults"][0];
  EXPECT_EQ(freeze["when"], "1500 ms after the rank's process is seen");
  EXPECT_EQ(freeze["lasts"], "heals after 5 s (window)");
  EXPECT_EQ(freeze["windows"][0]["opens_s"], 1.5);
  EXPECT_EQ(freeze["windows"][0]["closes_s"], 6.5);
  const std::string text = dry_run_text(plan);
  EXPECT_NE(text.find("nothing is launched"), std::string::npos);
  EXPECT_NE(text.find("rank 1: flap (net stall"), std::string::npos);
  EXPECT_NE(text.find("rank 0: nothing injected"), std::string::npos);
  EXPECT_NE(text.find("#3 +4.0 s to +5.0 s"), std::string::npos);
}

// A job that records every signal, injection and heal.
class WindowJob final : public RankSignaller {
 public:
  std::vector<std::string> log;
  int signal_rank(int rank, int sig, EventTime* sent) override {
    if (sent != nullptr) *sent = EventTime{1, 1};
    log.push_back(std::to_string(rank) + (sig == SIGSTOP ? " stop" : sig == SIGCONT ? " cont" : " kill"));
    return 1;
  }
  std::set<int> running_ranks() override { return {0, 1, 2, 3}; }
  void record_injection(const Fault& f, int rank, const std::string&, int, EventTime) override {
    log.push_back("inject " + f.id + " " + std::to_string(rank));
  }
  void record_injection_in_window(const Fault& f, int rank, const std::string&, int, EventTime,
                                  uint64_t window) override {
    log.push_back("inject " + f.id + " " + std::to_string(rank) + " #" + std::to_string(window));
  }
  void record_heal(const Fault& f, int rank, uint64_t window, EventTime) override {
    log.push_back("heal " + f.id + " " + std::to_string(rank) + " #" + std::to_string(window));
  }
};

TEST(ProcWindows, AStopHealsAndComesBackEveryWindow) {
  const Scenario s = scenario_from_json(
      drill({{{"id", "freeze"},
              {"layer", "proc"},
              {"kind", "stop"},
              {"target", {{"ranks", {2}}}},
              {"trigger", {{"after_ms", 100}, {"duration_s", 0.5}, {"every_s", 2}, {"times", 2}}}}}),
      "x.json");
  ProcFaultSchedule schedule(s);
  WindowJob job;
  for (int64_t t = 0; t <= 5000 * kMs; t += 10 * kMs) schedule.fire_due(t, job);
  EXPECT_EQ(job.log,
            (std::vector<std::string>{"2 stop", "inject freeze 2 #1", "2 cont", "heal freeze 2 #1", "2 stop",
                                      "inject freeze 2 #2", "2 cont", "heal freeze 2 #2"}));
  EXPECT_EQ(schedule.pending(), 0u);
}

TEST(ProcWindows, ARepeatedKillWaitsForARestartedRank) {
  const Scenario s = scenario_from_json(drill({{{"id", "crash"},
                                                {"layer", "proc"},
                                                {"kind", "kill"},
                                                {"target", {{"ranks", {1}}}},
                                                {"trigger", {{"every_s", 1}, {"times", 3}}}}}),
                                        "x.json");
  ProcFaultSchedule schedule(s);
  WindowJob job;
  for (int64_t t = 0; t <= 5000 * kMs; t += 10 * kMs) schedule.fire_due(t, job);
  EXPECT_EQ(job.log, (std::vector<std::string>{"1 kill", "inject crash 1 #1", "1 kill", "inject crash 1 #2",
                                               "1 kill", "inject crash 1 #3"}));
}

}  // namespace
}  // namespace ncclfi::cli
