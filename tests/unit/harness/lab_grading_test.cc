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
