// Timing verdicts by rounds: a clean or degraded outcome is repeated until a majority of rounds agrees,
// so one load spike during one faulted run cannot decide the verdict.
#include "rounds.h"

#include <gtest/gtest.h>

namespace ncclfi::harness {
namespace {

Judgement timed(Outcome outcome, Answer verdict) {
  Judgement j;
  j.outcome = outcome;
  j.timing.push_back(TimingComparison{});
  j.checks.push_back(CheckResult{"outcome", verdict, "judged by timing"});
  settle_verdict(j);
  return j;
}

Judgement untimed(Outcome outcome) {
  Judgement j;
  j.outcome = outcome;
  j.checks.push_back(CheckResult{"outcome", Answer::kPass, "stopped"});
  settle_verdict(j);
  return j;
}

TEST(Rounds, AnOutcomeTimingDidNotDecideNeedsNoSecondRound) {
  const auto d = decide_rounds({untimed(Outcome::kDetected)});
  EXPECT_FALSE(d.need_another);
  EXPECT_EQ(d.chosen, 0u);
  EXPECT_FALSE(d.check.has_value());
}

TEST(Rounds, ACleanRunWithoutABaselineNeedsNoSecondRound) {
  Judgement j;
  j.outcome = Outcome::kClean;  // no timing comparison: nothing that noise could have decided
  EXPECT_FALSE(decide_rounds({j}).need_another);
}

TEST(Rounds, ATimingVerdictIsConfirmedByASecondRound) {
  EXPECT_TRUE(decide_rounds({timed(Outcome::kDegraded, Answer::kPass)}).need_another);
  const auto d =
      decide_rounds({timed(Outcome::kDegraded, Answer::kPass), timed(Outcome::kDegraded, Answer::kPass)});
  EXPECT_FALSE(d.need_another);
  EXPECT_EQ(d.chosen, 0u);
  ASSERT_TRUE(d.check.has_value());
  EXPECT_EQ(d.check->answer, Answer::kPass);
  EXPECT_NE(d.check->reason.find("2 of 2 rounds agree (degraded, degraded)"), std::string::npos)
      << d.check->reason;
}

TEST(Rounds, OneSpikedRoundIsOutvotedAndTheMajorityRoundIsReported) {
  // Round 1 looked degraded (a load spike), rounds 2 and 3 clean: the verdict is round 2's.
  std::vector<Judgement> rounds{timed(Outcome::kDegraded, Answer::kFail),
                                timed(Outcome::kClean, Answer::kPass)};
  EXPECT_TRUE(decide_rounds(rounds).need_another);
  rounds.push_back(timed(Outcome::kClean, Answer::kPass));
  const auto d = decide_rounds(rounds);
  EXPECT_FALSE(d.need_another);
  EXPECT_EQ(d.chosen, 1u);
  Judgement reported = rounds[d.chosen];
  add_check(reported, *d.check);
  EXPECT_EQ(reported.verdict, Answer::kPass);
  EXPECT_NE(d.check->reason.find("2 of 3 rounds agree (degraded, clean, clean)"), std::string::npos);
}

TEST(Rounds, NoMajorityIsUnknownNeverPass) {
  std::vector<Judgement> rounds{timed(Outcome::kDegraded, Answer::kPass),
                                timed(Outcome::kClean, Answer::kFail), untimed(Outcome::kHung)};
  const auto d = decide_rounds(rounds);
  EXPECT_FALSE(d.need_another);
  ASSERT_TRUE(d.check.has_value());
  EXPECT_EQ(d.check->answer, Answer::kUnknown);
  Judgement reported = rounds[d.chosen];
  add_check(reported, *d.check);
  EXPECT_EQ(reported.verdict, Answer::kUnknown);
  ASSERT_FALSE(reported.reasons.empty());
  EXPECT_NE(reported.reasons.back().find("no majority of 3 rounds"), std::string::npos);
}

TEST(Rounds, AFailingCheckOutsideTimingStillFailsAfterAgreement) {
  Judgement failing = timed(Outcome::kDegraded, Answer::kPass);
  failing.checks.push_back(CheckResult{"injection", Answer::kFail, "no fault was injected"});
  settle_verdict(failing);
  const auto d = decide_rounds({failing, timed(Outcome::kDegraded, Answer::kPass)});
  Judgement reported = std::vector<Judgement>{failing}[d.chosen];
  add_check(reported, *d.check);
  EXPECT_EQ(reported.verdict, Answer::kFail);
}

TEST(Rounds, OfTheAgreeingRoundsTheWorstVerdictIsReported) {
  Judgement no_injection = timed(Outcome::kDegraded, Answer::kPass);
  no_injection.checks.push_back(CheckResult{"injection", Answer::kFail, "no fault was injected"});
  settle_verdict(no_injection);
  const auto d = decide_rounds({timed(Outcome::kDegraded, Answer::kPass), no_injection});
  EXPECT_EQ(d.chosen, 1u);
  EXPECT_NE(d.check->reason.find("round 2's figures"), std::string::npos) << d.check->reason;
}

}  // namespace
}  // namespace ncclfi::harness
