// The recovered_in_place outcome (ncclfi-workload --recover shrink) and its checks, resume_s and
// survivors: what makes a run one, and what keeps a run from passing as one.
#include <gtest/gtest.h>

#include "history_builder.h"
#include "judge.h"

namespace ncclfi::harness {
namespace {
using namespace testing;

// Four ranks; the harness's record says rank 2 was killed at 2 s. Every survivor recovered at 3 s,
// completed its first step after it at 3.5 s (rank 3: `resume_at`), wrote done and exited 0.
History shrunk_run(double resume_at = 3.5, bool inject = true) {
  History h = make_history(4);
  if (inject)
    add_event(h, 2.0, 2, "harness", "inject", {{"fault_id", "die"}, {"kind", "kill"}, {"layer", "proc"}});
  add_exit(h, 2.0, 2, std::nullopt, 9);
  for (int r : {0, 1, 3}) {
    add_event(h, 2.5, r, "workload", "recovering", {{"error", "async_error: remote process exited"}});
    add_event(h, 3.0, r, "workload", "recovered",
              {{"resume_step", 150}, {"survivors", 3}, {"excluded", {2}}, {"method", "shrink"}});
    add_event(h, r == 3 ? resume_at : 3.5, r, "workload", "resumed", {{"step", 150}});
    add_event(h, 6.0, r, "workload", "done", {{"iters", 600}, {"seconds", 5.0}, {"verified", true}});
    add_exit(h, 6.1, r, 0);
  }
  return h;
}

TEST(InPlaceRecovery, SurvivorsThatShrankAndFinishedAreRecoveredInPlace) {
  History h = shrunk_run(4.25);
  const Judgement j = judge(h, nlohmann::json{{"outcome", "recovered_in_place"},
                                              {"survivors", 3},
                                              {"resume_s", {{"max", 5}}},
                                              {"result", "verified"}});
  EXPECT_EQ(j.outcome, Outcome::kRecoveredInPlace) << j.outcome_reason;
  ASSERT_TRUE(j.resume_s);
  EXPECT_NEAR(*j.resume_s, 2.25, 1e-6);  // the last survivor's first step, from the harness's injection
  EXPECT_EQ(j.survivors, 3);
  EXPECT_EQ(j.verdict, Answer::kPass) << j.reasons.front();
  EXPECT_NE(j.outcome_reason.find("resumed 2.250 s after the injection"), std::string::npos)
      << j.outcome_reason;
  EXPECT_NE(j.outcome_reason.find("(communicator: shrink)"), std::string::npos) << j.outcome_reason;
  EXPECT_NE(observed_summary(j).find("resume=2.25s survivors=3"), std::string::npos) << observed_summary(j);
  // verdict.json keeps the figures, and a re-read gets them back.
  const Judgement again = judgement_from_json(to_json(j));
  EXPECT_EQ(again.outcome, Outcome::kRecoveredInPlace);
  EXPECT_EQ(again.survivors, 3);
  ASSERT_TRUE(again.resume_s);
  EXPECT_NEAR(*again.resume_s, 2.25, 1e-6);
}

TEST(InPlaceRecovery, NoFaultFiredIsNeverRecoveredInPlace) {
  History h = shrunk_run(3.5, /*inject=*/false);
  h.armed_faults = {"die"};
  const Judgement j = judge(h, nlohmann::json{{"outcome", "recovered_in_place"}, {"survivors", 3}});
  EXPECT_NE(j.outcome, Outcome::kRecoveredInPlace) << j.outcome_reason;
  EXPECT_EQ(j.verdict, Answer::kFail);
  EXPECT_NE(j.in_place_problem.find("no fault fired"), std::string::npos) << j.in_place_problem;
}

TEST(InPlaceRecovery, ASurvivorThatCrashedAfterItsRecoveryIsNotRecovered) {
  History h = shrunk_run();
  for (auto& x : h.exits) {
    if (x.rank == 3) {
      x.exit_code.reset();
      x.signal = 11;
    }
  }
  const Judgement j = judge(h, nlohmann::json{{"outcome", "recovered_in_place"}, {"survivors", 3}});
  EXPECT_EQ(j.outcome, Outcome::kDetected) << j.outcome_reason;
  EXPECT_EQ(j.verdict, Answer::kFail);
  EXPECT_NE(j.in_place_problem.find("survivor rank 3 did not exit 0"), std::string::npos)
      << j.in_place_problem;
}

TEST(InPlaceRecovery, ASurvivorThatNeverCompletedAStepAfterwardsIsNotRecovered) {
  History h = shrunk_run();
  std::erase_if(h.events, [](const HistoryEvent& e) { return e.rank == 1 && e.event == "resumed"; });
  h.deadline_hit = true;
  const Judgement j = judge(h, nlohmann::json{{"outcome", "recovered_in_place"}});
  EXPECT_NE(j.outcome, Outcome::kRecoveredInPlace) << j.outcome_reason;
  EXPECT_EQ(j.verdict, Answer::kFail);
}

TEST(InPlaceRecovery, ResumeTimeOutsideItsBoundsFails) {
  History h = shrunk_run(9.0);
  const Judgement j = judge(h, nlohmann::json{{"outcome", "recovered_in_place"}, {"resume_s", {{"max", 5}}}});
  EXPECT_EQ(j.outcome, Outcome::kRecoveredInPlace);
  EXPECT_EQ(j.verdict, Answer::kFail);
  ASSERT_FALSE(j.reasons.empty());
  EXPECT_NE(j.reasons.front().find("resume_s: expected the survivors to resume within <= 5.000s"),
            std::string::npos)
      << j.reasons.front();
  EXPECT_NE(j.reasons.front().find("observed 7.000s"), std::string::npos) << j.reasons.front();
}

TEST(InPlaceRecovery, SurvivorCountIsCheckedExactly) {
  History h = shrunk_run();
  const Judgement j = judge(h, nlohmann::json{{"outcome", "recovered_in_place"}, {"survivors", 2}});
  EXPECT_EQ(j.verdict, Answer::kFail);
  EXPECT_NE(j.reasons.front().find("expected 2 survivor(s) to carry on, observed 3"), std::string::npos)
      << j.reasons.front();
}

TEST(InPlaceRecovery, TheChecksSayWhyWhenNothingRecovered) {
  History h = make_history(2);
  add_inject(h, 1.0, 1, "crash");
  add_exit(h, 1.0, 1, std::nullopt, 9);
  add_exit(h, 6.0, 0, 3);
  add_detection(h, 6.0, 0, "workload_watchdog");
  const Judgement j =
      judge(h, nlohmann::json{{"outcome", "detected"}, {"survivors", 1}, {"resume_s", {{"max", 5}}}});
  EXPECT_EQ(j.outcome, Outcome::kDetected);
  EXPECT_FALSE(j.survivors);
  for (const auto& c : j.checks) {
    if (c.field != "survivors" && c.field != "resume_s") continue;
    EXPECT_EQ(c.answer, Answer::kFail) << c.field;
    EXPECT_NE(c.reason.find("no rank recovered in place"), std::string::npos) << c.reason;
  }
}

TEST(InPlaceRecovery, WrongDataAfterTheRecoveryIsSilentCorruption) {
  History h = shrunk_run();
  for (auto& e : h.events) {
    if (e.rank == 1 && e.event == "done") e.fields["verified"] = false;
  }
  EXPECT_EQ(decide_outcome(h, 0.2), Outcome::kSilentCorruption);
}

TEST(InPlaceRecovery, ExpectationFieldsAreParsedAndBadValuesNamed) {
  const Expectation ok = parse_expectation(
      {{"outcome", "recovered_in_place"}, {"survivors", 3}, {"resume_s", {{"min", 0.5}, {"max", 30}}}});
  EXPECT_TRUE(ok.problems.empty());
  ASSERT_EQ(ok.outcomes.size(), 1u);
  EXPECT_EQ(ok.outcomes[0], Outcome::kRecoveredInPlace);
  EXPECT_EQ(ok.survivors, 3);
  ASSERT_TRUE(ok.resume_s && ok.resume_s->max);
  EXPECT_EQ(*ok.resume_s->max, 30);
  EXPECT_NE(expected_summary(ok).find("recovered_in_place resume<=30s survivors=3"), std::string::npos)
      << expected_summary(ok);

  for (const auto& bad : {nlohmann::json(0), nlohmann::json(2.5), nlohmann::json("3"), nlohmann::json(-1)}) {
    const Expectation e = parse_expectation({{"outcome", "recovered_in_place"}, {"survivors", bad}});
    const auto* p = e.problem_for("survivors");
    ASSERT_NE(p, nullptr) << bad;
    EXPECT_EQ(p->pointer, "/expect/survivors");
    EXPECT_EQ(p->expected, "a whole number of ranks >= 1");
  }
  const Expectation inverted =
      parse_expectation({{"outcome", "recovered_in_place"}, {"resume_s", {{"min", 9}, {"max", 2}}}});
  ASSERT_NE(inverted.problem_for("resume_s"), nullptr);
  EXPECT_EQ(inverted.problem_for("resume_s")->pointer, "/expect/resume_s/max");
  const Expectation negative =
      parse_expectation({{"outcome", "recovered_in_place"}, {"resume_s", {{"max", -1}}}});
  ASSERT_NE(negative.problem_for("resume_s"), nullptr);
  EXPECT_EQ(negative.problem_for("resume_s")->expected, "a number >= 0");
}

}  // namespace
}  // namespace ncclfi::harness
