// Verdicts a user can trust: a run whose fault never fired never passes; every reason measured from
// the first injection names it; detection times use the monotonic clock; lines that break the events
// contract are reported, never read as time 0; the expectation is parsed once, with pointers.
#include <gtest/gtest.h>

#include "history_builder.h"
#include "judge.h"
#include "observe.h"

namespace ncclfi::harness {
namespace {
using namespace testing;
using json = nlohmann::json;

// A finished run four times slower than its baselines: `degraded` by timing alone.
History slow_finished_run(bool injected) {
  History h = make_history(2);
  h.armed_faults = {"congestion"};
  h.baselines = {{1.0, steps_around(0.003, 0.1, 40)}, {1.0, steps_around(0.003, 0.1, 40)}};
  if (injected) add_inject(h, 0.05, 1, "delay");
  add_steps(h, steps_around(0.012, 0.1, 40));
  all_done(h, 2, true);
  all_exit(h, 2.1, 0);
  return h;
}

const CheckResult* find_check(const Judgement& j, const std::string& field) {
  for (const auto& c : j.checks) {
    if (c.field == field) return &c;
  }
  return nullptr;
}

TEST(NoFaultFired, ADegradedLookingRunWithoutInjectionFails) {
  History h = slow_finished_run(false);
  Judgement j = judge(h, json{{"outcome", "degraded"}, {"result", "verified"}});
  EXPECT_EQ(j.outcome, Outcome::kDegraded);  // the timing alone would have passed it
  EXPECT_EQ(j.verdict, Answer::kFail);
  const CheckResult* injection = find_check(j, "injection");
  ASSERT_NE(injection, nullptr);
  EXPECT_EQ(injection->answer, Answer::kFail);
  EXPECT_NE(injection->reason.find("no fault was injected"), std::string::npos) << injection->reason;
  EXPECT_NE(injection->reason.find("congestion"), std::string::npos) << injection->reason;
}

TEST(NoFaultFired, AnInjectionThatHadNoEffectIsNotAnInjection) {
  // The front ends record a firing that could do nothing ("effect": "none: ...", e.g. the op failed
  // before a corruption, or the buffer was device memory): the run must not count as injected.
  History h = slow_finished_run(false);
  add_event(h, 0.05, 1, "net", "inject",
            {{"fault_id", "f1"},
             {"kind", "corrupt"},
             {"effect", "none: corrupt skipped, the buffer is device memory"}});
  Judgement j = judge(h, json{{"outcome", "degraded"}});
  EXPECT_EQ(j.verdict, Answer::kFail);
  ASSERT_NE(find_check(j, "injection"), nullptr);
  EXPECT_EQ(find_check(j, "injection")->answer, Answer::kFail);
  EXPECT_FALSE(j.first_injection_ns.has_value());
}

TEST(NoFaultFired, UnknownWhenTheScenarioAllowsIt) {
  History h = slow_finished_run(false);
  Judgement j = judge(h, json{{"outcome", "degraded"}, {"fault_may_not_fire", true}});
  EXPECT_EQ(j.verdict, Answer::kUnknown);
  ASSERT_NE(find_check(j, "injection"), nullptr);
  EXPECT_EQ(find_check(j, "injection")->answer, Answer::kUnknown);
}

TEST(NoFaultFired, InjectedRunPassesAndNamesTheFirstInjection) {
  History h = slow_finished_run(true);
  Judgement j = judge(h, json{{"outcome", "degraded"}});
  EXPECT_EQ(j.verdict, Answer::kPass) << j.reasons.front();
  const CheckResult* injection = find_check(j, "injection");
  ASSERT_NE(injection, nullptr);
  EXPECT_NE(injection->reason.find("first_injection at +0.050s"), std::string::npos) << injection->reason;
  const CheckResult* outcome = find_check(j, "outcome");
  ASSERT_NE(outcome, nullptr);
  EXPECT_NE(outcome->reason.find("vs baseline"), std::string::npos) << outcome->reason;
  EXPECT_NE(outcome->reason.find("noise"), std::string::npos) << outcome->reason;
}

TEST(NoFaultFired, NoCheckWithoutArmedFaults) {
  History h = make_history(1);
  all_exit(h, 1, 0);
  Judgement j = judge(h, json{{"outcome", "clean"}});
  EXPECT_EQ(find_check(j, "injection"), nullptr);
}

History detected_with_faults() {
  History h = make_history(2);
  h.armed_faults = {"drop1"};
  add_inject(h, 1.0, 1);
  add_detection(h, 4.0, 0, "workload_watchdog");
  all_exit(h, 4.1, 3);
  return h;
}

TEST(FirstInjection, NamedInEveryReasonMeasuredFromIt) {
  History h = detected_with_faults();
  Judgement j = judge(h, json{{"outcome", "detected"},
                              {"detected_by", {"workload_watchdog"}},
                              {"detection_s", {{"min", 1}, {"max", 5}}}});
  EXPECT_EQ(j.verdict, Answer::kPass);
  for (const char* field : {"detected_by", "detection_s", "injection"}) {
    const CheckResult* c = find_check(j, field);
    ASSERT_NE(c, nullptr) << field;
    EXPECT_NE(c->reason.find("first_injection at +1.000s"), std::string::npos) << field << ": " << c->reason;
  }
}

TEST(DetectionTime, MonotonicClockWhenBothEventsCarryItFromOneHost) {
  History h = detected_with_faults();
  h.events[0].mono_ns = 50'000'000'000;
  h.events[0].host = "node1";
  h.detections[0].mono_ns = 52'500'000'000;  // 2.5 s on the monotonic clock; the wall clock says 3 s
  h.detections[0].host = "node1";
  History other_host = h;
  Judgement j = judge(h, json{{"outcome", "detected"}});
  ASSERT_TRUE(j.detection_s);
  EXPECT_NEAR(*j.detection_s, 2.5, 1e-9);
  other_host.detections[0].host = "node2";  // monotonic clocks of two hosts do not compare
  Judgement k = judge(other_host, json{{"outcome", "detected"}});
  ASSERT_TRUE(k.detection_s);
  EXPECT_NEAR(*k.detection_s, 3.0, 1e-9);
}

TEST(EventsContract, BadLinesAreReportedOncePerRankWithTheLine) {
  History h = make_history(4);
  const std::string no_ts = R"({"rank":2,"source":"workload","event":"watchdog_fired","waited_ms":3000})";
  const std::string zero_ts = R"({"ts_ns":0,"rank":2,"source":"workload","event":"op"})";
  const std::string no_rank = R"({"ts_ns":5,"source":"mine","event":"op"})";
  const std::string no_event = R"({"ts_ns":5,"rank":1,"source":"workload"})";
  EXPECT_TRUE(observe_event_line(no_ts, h));
  EXPECT_TRUE(observe_event_line(zero_ts, h));
  EXPECT_TRUE(observe_event_line(no_rank, h));
  EXPECT_TRUE(observe_event_line(no_event, h));
  EXPECT_TRUE(observe_event_line(R"({"ts_ns":7,"rank":0,"source":"workload","event":"op"})", h));
  ASSERT_EQ(h.events.size(), 1u);     // only the good line reaches the timeline
  EXPECT_TRUE(h.detections.empty());  // a watchdog line without a time is no detection at time 0
  ASSERT_EQ(h.contract_errors.size(), 3u);
  EXPECT_EQ(h.contract_errors[0].rank, 2);
  EXPECT_EQ(h.contract_errors[0].count, 2);
  EXPECT_EQ(h.contract_errors[0].line, no_ts);
  EXPECT_NE(h.contract_errors[0].problem.find("ts_ns"), std::string::npos);
  EXPECT_NE(h.contract_errors[1].problem.find("rank"), std::string::npos);
  EXPECT_NE(h.contract_errors[2].problem.find("event"), std::string::npos);

  all_exit(h, 1, 0);
  Judgement j = judge(h, json{{"outcome", "clean"}});
  EXPECT_EQ(j.verdict, Answer::kUnknown);
  const CheckResult* events = find_check(j, "events");
  ASSERT_NE(events, nullptr);
  EXPECT_NE(events->reason.find("workload rank 2"), std::string::npos) << events->reason;
  EXPECT_NE(events->reason.find("watchdog_fired"), std::string::npos) << events->reason;
}

TEST(Expectation, ParsedOnceWithPointersForProblems) {
  Expectation e = parse_expectation(json{{"outcome", "degraded"},
                                         {"detection_s", {{"min", 3}, {"max", 1}}},
                                         {"ranks", {0, "x"}},
                                         {"fault_may_not_fire", true},
                                         {"degraded_margin", 0.5}});
  EXPECT_EQ(e.outcomes, std::vector<Outcome>{Outcome::kDegraded});
  EXPECT_TRUE(e.fault_may_not_fire);
  EXPECT_DOUBLE_EQ(e.margin(), 0.5);
  EXPECT_TRUE(e.needs_baseline());
  ASSERT_EQ(e.problems.size(), 2u);
  EXPECT_EQ(e.problems[0].pointer, "/expect/detection_s/max");
  EXPECT_EQ(e.problems[1].pointer, "/expect/ranks/1");
  EXPECT_DOUBLE_EQ(parse_expectation(json{{"outcome", "clean"}}).margin(),
                   Expectation::kDefaultDegradedMargin);
  EXPECT_EQ(expected_summary(parse_expectation(json{{"outcome", "detected"},
                                                    {"detected_by", {"workload_watchdog"}},
                                                    {"detection_s", {{"min", 2.5}, {"max", 5}}},
                                                    {"result", "verified"}})),
            "detected(workload_watchdog) 2.5-5s verified");
  // A one-sided range never prints as a negative number.
  EXPECT_EQ(expected_summary(parse_expectation(json{{"outcome", "detected"}, {"detection_s", {{"max", 2}}}})),
            "detected <=2s");
  EXPECT_EQ(expected_summary(parse_expectation(json{{"outcome", "detected"}, {"detection_s", {{"min", 1}}}})),
            "detected >=1s");
}

}  // namespace
}  // namespace ncclfi::harness
