// The grading of lab answers (harness/apps/labs/lab_grading.cc) and the variant machinery
// (lab_catalogue.cc): pure logic, no job runs.
#include <gtest/gtest.h>

#include "lab_catalogue.h"
#include "lab_grading.h"

namespace ncclfi::cli::lab {
namespace {

AnswerKey nic_on_rank_2() {
  AnswerKey key;
  key.cause = "nic";
  key.ranks = std::set<int>{2};
  key.misconceptions["dead_rank"] = "a dead process leaves no error of its own";
  return key;
}

TEST(LabGrading, TheRightAnswerScoresFullMarks) {
  const Grade g = grade(nic_on_rank_2(), {{2}, "nic", {}}, 0);
  EXPECT_TRUE(g.right);
  EXPECT_EQ(g.score, 100);
}

TEST(LabGrading, EachHintCostsTenPoints) {
  EXPECT_EQ(grade(nic_on_rank_2(), {{2}, "nic", {}}, 1).score, 90);
  EXPECT_EQ(grade(nic_on_rank_2(), {{2}, "nic", {}}, 3).score, 70);
  EXPECT_EQ(grade(nic_on_rank_2(), {{2}, "nic", {}}, 20).score, 0);  // never below zero
  EXPECT_TRUE(grade(nic_on_rank_2(), {{2}, "nic", {}}, 20).right);
}

TEST(LabGrading, TheRightRankWithTheWrongCauseGetsPartialCredit) {
  const Grade g = grade(nic_on_rank_2(), {{2}, "congestion", {}}, 0);
  EXPECT_FALSE(g.right);
  EXPECT_EQ(g.score, kRankPoints);
}

TEST(LabGrading, TheRightCauseOnTheWrongRankIsWrong) {
  const Grade g = grade(nic_on_rank_2(), {{1}, "nic", {}}, 0);
  EXPECT_FALSE(g.right);
  EXPECT_EQ(g.score, kCausePoints + kDetailPoints);
}

TEST(LabGrading, SomeOfTheRanksGetHalfTheRankPoints) {
  const Grade g = grade(nic_on_rank_2(), {{1, 2}, "nic", {}}, 0);
  EXPECT_FALSE(g.right);
  EXPECT_EQ(g.rank_points, kRankPoints / 2);
}

TEST(LabGrading, AWrongCauseKnownAsAMisconceptionGetsItsOwnFeedback) {
  const Grade g = grade(nic_on_rank_2(), {{2}, "dead_rank", {}}, 0);
  bool found = false;
  for (const auto& f : g.feedback) found = found || f.find("no error of its own") != std::string::npos;
  EXPECT_TRUE(found);
}

TEST(LabGrading, FeedbackNeverNamesTheAnswer) {
  for (const char* cause : {"congestion", "hung_rank", "dead_rank", "pcie"}) {
    for (const auto& f : grade(nic_on_rank_2(), {{0}, cause, {}}, 0).feedback) {
      EXPECT_EQ(f.find("nic"), std::string::npos) << f;
      EXPECT_EQ(f.find('2'), std::string::npos) << f;
    }
  }
}

TEST(LabGrading, EachWrongAttemptBeforeTheRightOneCostsPoints) {
  // Four blind guesses, the fourth right: three wrong ones cost kWrongAttemptPenalty each.
  const Grade g = grade(nic_on_rank_2(), {{2}, "nic", {}}, AttemptContext{0, 3, kWrongAttemptPenalty});
  EXPECT_TRUE(g.right);
  EXPECT_EQ(g.score, 100 - 3 * kWrongAttemptPenalty);
  EXPECT_EQ(g.wrong_attempt_penalty, 3 * kWrongAttemptPenalty);
  // With a hint as well, and never below 0.
  EXPECT_EQ(grade(nic_on_rank_2(), {{2}, "nic", {}}, AttemptContext{1, 1, 15}).score, 100 - 10 - 15);
  EXPECT_EQ(grade(nic_on_rank_2(), {{2}, "nic", {}}, AttemptContext{0, 19, 15}).score, 0);
  // A class that sets the penalty to 0 grades as before.
  EXPECT_EQ(grade(nic_on_rank_2(), {{2}, "nic", {}}, AttemptContext{0, 5, 0}).score, 100);
  EXPECT_EQ(to_json(g)["wrong_attempt_penalty"], 3 * kWrongAttemptPenalty);
}

TEST(LabGrading, TheSummaryKeepsTheFirstBestAndRightScores) {
  const nlohmann::json attempts = {
      {{"cause", "hung_rank"}, {"grade", {{"right", false}, {"score", 40}}}},
      {{"cause", "dead_rank"}, {"grade", {{"right", false}, {"score", 35}}}},
      {{"cause", "nic"}, {"grade", {{"right", true}, {"score", 70}}}},
      {{"cause", "nic"}, {"grade", {{"right", true}, {"score", 55}}}},
  };
  const AttemptSummary s = summarize_attempts(attempts);
  EXPECT_EQ(s.attempts, 4);
  EXPECT_EQ(s.first_score, 40);
  EXPECT_EQ(s.best_score, 70);
  EXPECT_EQ(s.score, 70);  // the first right answer's
  EXPECT_TRUE(s.right);
  EXPECT_EQ(s.right_attempt, 2);
  EXPECT_EQ(wrong_attempts(attempts), 2);
  const AttemptSummary none = summarize_attempts(nlohmann::json::array({attempts[0], attempts[1]}));
  EXPECT_FALSE(none.right);
  EXPECT_EQ(none.score, 40);  // the best, when none is right
  EXPECT_EQ(none.right_attempt, -1);
}

TEST(LabGrading, AMisconceptionThatDescribesTheAnswerIsNeverShown) {
  AnswerKey key = nic_on_rank_2();
  key.misconceptions["dead_rank"] =
      "here the rank printed the same network-transport error as its neighbours";
  key.misconceptions["congestion"] = "the HCA of that node raised a port error";
  key.misconceptions["hung_rank"] = "a hung rank keeps its process until the scheduler ends it";
  for (const char* cause : {"dead_rank", "congestion"}) {
    EXPECT_NE(misconception_problem("nic", cause, key.misconceptions[cause]), "") << cause;
    for (const auto& f : grade(key, {{2}, cause, {}}, 0).feedback) {
      EXPECT_EQ(f.find("network-transport"), std::string::npos) << f;
      EXPECT_EQ(f.find("HCA"), std::string::npos) << f;
    }
  }
  EXPECT_EQ(misconception_problem("nic", "hung_rank", key.misconceptions["hung_rank"]), "");
  bool shown = false;
  for (const auto& f : grade(key, {{2}, "hung_rank", {}}, 0).feedback)
    shown = shown || f.find("keeps its process") != std::string::npos;
  EXPECT_TRUE(shown);
  // The cause's own name, in either spelling, and words inside longer ones.
  EXPECT_NE(misconception_problem("dead_rank", "nic", "it is a dead rank"), "");
  EXPECT_NE(misconception_problem("congestion", "pcie", "a congested switch"), "");
  EXPECT_NE(misconception_problem("link_corruption", "nic", "the data arrived, but wrong"), "");
  EXPECT_EQ(misconception_problem("congestion", "pcie", "the link test shows one rank"), "");
}

// Every lab's feedback for a wrong cause, in every variant, says nothing of that variant's answer.
TEST(LabGrading, NoMisconceptionInTheCatalogueDescribesItsAnswer) {
  const auto labs = load_lab_catalogue(NCCLFI_SOURCE_DIR "/scenarios/labs");  // checks it too
  ASSERT_FALSE(labs.empty());
  size_t texts = 0;
  for (const Lab& lab : labs) {
    for (size_t v = 0; v < lab.variant_count(); ++v) {
      const AnswerKey key = answer_key_from_json(resolve_variant(lab, v).answer);
      for (const auto& [wrong, text] : key.misconceptions) {
        EXPECT_EQ(misconception_problem(key.cause, wrong, text), "") << lab.file << " variant " << v;
        ++texts;
      }
    }
  }
  EXPECT_GT(texts, 0U);
}

TEST(LabGrading, DetailsMustAllBeRight) {
  AnswerKey key;
  key.cause = "system_error";
  key.ranks = std::set<int>{3};
  key.details["code"] = "ncclSystemError";
  EXPECT_TRUE(grade(key, {{3}, "system_error", {{"code", "ncclSystemError"}}}, 0).right);
  const Grade missing = grade(key, {{3}, "system_error", {}}, 0);
  EXPECT_FALSE(missing.right);
  EXPECT_EQ(missing.score, kRankPoints + kCausePoints);
  EXPECT_FALSE(grade(key, {{3}, "system_error", {{"code", "ncclRemoteError"}}}, 0).right);
}

TEST(LabGrading, ALabThatAsksNoRankGradesTheCauseAlone) {
  AnswerKey key;
  key.cause = "timeout_config";
  const Grade g = grade(key, {{0}, "timeout_config", {}}, 0);
  EXPECT_TRUE(g.right);
  EXPECT_EQ(g.score, 100);
}

TEST(LabGrading, TheKeyRoundTripsThroughJson) {
  const AnswerKey key = nic_on_rank_2();
  const AnswerKey back = answer_key_from_json(to_json(key));
  EXPECT_EQ(back.cause, key.cause);
  EXPECT_EQ(back.ranks, key.ranks);
  EXPECT_EQ(back.misconceptions, key.misconceptions);
}

TEST(LabGrading, TheVocabularyHasTheCourseCauses) {
  for (const char* cause : {"nic", "congestion", "link_corruption", "nvlink", "pcie", "hung_rank",
                            "dead_rank", "timeout_config", "bootstrap"}) {
    EXPECT_TRUE(is_known_cause(cause)) << cause;
  }
  EXPECT_FALSE(is_known_cause("cosmic_rays"));
}

TEST(LabVariants, PlaceholdersKeepTheirTypeAloneAndBecomeTextInside) {
  const nlohmann::json variant = {{"rank", 2}, {"code", "ncclSystemError"}};
  const auto out = substitute_variant(
      {{"ranks", {"{var:rank}"}}, {"text", "rank {var:rank}: {var:code}"}, {"n", 3}}, variant);
  EXPECT_EQ(out["ranks"][0], 2);
  EXPECT_EQ(out["text"], "rank 2: ncclSystemError");
  EXPECT_EQ(out["n"], 3);
  EXPECT_THROW(substitute_variant("{var:nope}", variant), std::runtime_error);
}

}  // namespace
}  // namespace ncclfi::cli::lab
