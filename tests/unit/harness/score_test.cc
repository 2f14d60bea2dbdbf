// `ncclfi score`'s ground truth and its rules for right and wrong (harness/apps/score/).
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "diagnosis.h"
#include "ground_truth.h"
#include "score.h"

namespace fs = std::filesystem;
using namespace ncclfi;
using score::Truth;

namespace {

nlohmann::json inject(int rank, const std::string& layer, const std::string& kind) {
  return {
      {"event", "inject"}, {"rank", rank}, {"source", "net"}, {"fields", {{"layer", layer}, {"kind", kind}}}};
}

nlohmann::json verdict(nlohmann::json events, const std::string& outcome,
                       nlohmann::json tags = nlohmann::json::array()) {
  return {{"expect", {{"outcome", outcome}}},
          {"tags", tags},
          {"mechanisms", nlohmann::json::array()},
          {"rank_hosts", {{"0", "vm"}, {"1", "vm"}, {"2", "vm"}, {"3", "vm"}}},
          {"history", {{"events", events}}}};
}

const nlohmann::json kPlan = {{"faults", nlohmann::json::array()}};

diagnose::Diagnosis diagnosis(std::vector<int> ranks, const std::string& site, const std::string& symptom) {
  diagnose::Diagnosis d;
  d.failure = true;
  d.culprit_ranks = std::move(ranks);
  d.site = site;
  d.symptom = symptom;
  return d;
}

}  // namespace

TEST(ScoreTruth, TheInjectionsThatFiredGiveTheRanksAndTheKindTheSite) {
  const Truth t = score::truth_of_verdict(
      kPlan, verdict({inject(2, "net", "nic_down"), inject(2, "net", "nic_down")}, "detected"));
  EXPECT_TRUE(t.fault);
  EXPECT_EQ(t.ranks, (std::set<int>{2}));
  EXPECT_EQ(t.site, "nic");
  EXPECT_EQ(t.symptom, "crashed or died");
  EXPECT_FALSE(t.several_hosts);  // all on "vm": the host is not worth scoring
}

TEST(ScoreTruth, AFaultThatNeverFiredIsACleanRun) {
  nlohmann::json plan = {{"faults", {{{"layer", "proc"}, {"kind", "kill"}}}}};
  const Truth t = score::truth_of_verdict(plan, verdict(nlohmann::json::array(), "detected"));
  EXPECT_FALSE(t.fault);
  EXPECT_TRUE(t.ranks.empty());
  EXPECT_EQ(t.symptom, "none");
}

TEST(ScoreTruth, ASiteTagWinsOverTheKindAndTheOutcomeGivesTheSymptom) {
  const Truth corrupt =
      score::truth_of_verdict(kPlan, verdict({inject(1, "net", "delay")}, "detected", {"site3"}));
  EXPECT_EQ(corrupt.site, "degraded_link");
  const Truth slow = score::truth_of_verdict(kPlan, verdict({inject(1, "net", "throttle")}, "degraded"));
  EXPECT_EQ(slow.site, "congestion");
  EXPECT_EQ(slow.symptom, "slow with no error");
  const Truth hang = score::truth_of_verdict(kPlan, verdict({inject(3, "net", "drop")}, "detected"));
  EXPECT_EQ(hang.symptom, "hung");
  const Truth start = score::truth_of_verdict(kPlan, verdict({inject(0, "net", "connect_fail")}, "detected"));
  EXPECT_EQ(start.site, "bootstrap");
  EXPECT_EQ(start.symptom, "failed to start");
}

TEST(ScoreTruth, CodesAreNotSites) {
  EXPECT_EQ(score::site_of_fault("api", "error"), "");
  EXPECT_EQ(score::site_of_fault("api", "async_error"), "");
  EXPECT_EQ(score::site_of_lab_cause("remote_error"), "");
  EXPECT_EQ(score::site_of_lab_cause("link_corruption"), "degraded_link");
}

TEST(ScoreCase, TheRanksMustMatchExactlyAndATieIsWrong) {
  const Truth t = score::truth_of_verdict(kPlan, verdict({inject(3, "proc", "kill")}, "detected"));
  auto right = score::score_case("r", "run", t, diagnosis({3}, "dead_rank", "crashed or died"));
  EXPECT_TRUE(*right.rank);
  EXPECT_TRUE(*right.site);
  EXPECT_TRUE(*right.rank_and_site);
  EXPECT_TRUE(*right.symptom);
  EXPECT_FALSE(right.host.has_value());  // one host
  auto more = score::score_case("r", "run", t, diagnosis({2, 3}, "dead_rank", "crashed or died"));
  EXPECT_FALSE(*more.rank);
  EXPECT_FALSE(*more.rank_and_site);
  diagnose::Diagnosis tied = diagnosis({3}, "dead_rank", "crashed or died");
  tied.tied_sites = {"dead_rank", "nic"};
  auto undecided = score::score_case("r", "run", t, tied);
  EXPECT_EQ(undecided.answer.site, "undecided");
  EXPECT_FALSE(*undecided.site);
}

TEST(ScoreCase, EitherHangIsRightForAHungRank) {
  const Truth t = score::truth_of_verdict(kPlan, verdict({inject(1, "proc", "stop")}, "detected"));
  EXPECT_TRUE(*score::score_case("r", "run", t, diagnosis({1}, "gpu_hang", "hung")).site);
  EXPECT_FALSE(*score::score_case("r", "run", t, diagnosis({1}, "dead_rank", "hung")).site);
  // A tie between the two hangs stays within what the truth accepts; a tie with a third site does not.
  diagnose::Diagnosis both = diagnosis({1}, "gpu_hang", "hung");
  both.tied_sites = {"gpu_hang", "host_hang"};
  const auto either = score::score_case("r", "run", t, both);
  EXPECT_EQ(either.answer.site, "undecided");
  EXPECT_TRUE(*either.site);
  both.tied_sites.push_back("dead_rank");
  EXPECT_FALSE(*score::score_case("r", "run", t, both).site);
}

TEST(ScoreCase, ACleanRunIsRightOnlyWhenNoOneIsBlamed) {
  const Truth t = score::truth_of_verdict(kPlan, verdict(nlohmann::json::array(), "clean"));
  diagnose::Diagnosis none;
  auto quiet = score::score_case("r", "run", t, none);
  EXPECT_TRUE(*quiet.rank);
  EXPECT_TRUE(*quiet.symptom);
  EXPECT_FALSE(quiet.site.has_value());
  auto blamed = score::score_case("r", "run", t, diagnosis({0}, "nic", "crashed or died"));
  EXPECT_FALSE(*blamed.rank);
  EXPECT_FALSE(*blamed.symptom);
}

// A lab whose answer is in no rank (a setting of the whole job) scores no rank, as its grading counts
// none: the rank it made hang to show the setting's effect is not the answer.
TEST(ScoreTruth, ALabAnswerInNoRankScoresNoRank) {
  const fs::path ticket = fs::temp_directory_path() / ("ncclfi-score-norank-" + std::to_string(::getpid()));
  fs::remove_all(ticket);
  fs::create_directories(ticket / "runs");
  std::ofstream(ticket / "key.json")
      << R"({"answer": {"cause": "timeout_config", "ranks": null}, "site": "configuration"})";
  const Truth t = score::truth_of_lab_ticket(ticket.string());
  EXPECT_FALSE(t.ranks_scored);
  EXPECT_TRUE(t.ranks.empty());
  const auto c = score::score_case("lab", "lab", t, diagnosis({}, "configuration", "hung"));
  EXPECT_FALSE(c.rank.has_value());
  EXPECT_TRUE(*c.site);
  EXPECT_TRUE(*c.rank_and_site);
  EXPECT_FALSE(*score::score_case("lab", "lab", t, diagnosis({2}, "host_hang", "hung")).rank_and_site);
  // With ranks in the answer, they are scored.
  std::ofstream(ticket / "key.json") << R"({"answer": {"cause": "hung_rank", "ranks": [2]}})";
  EXPECT_TRUE(score::truth_of_lab_ticket(ticket.string()).ranks_scored);
  fs::remove_all(ticket);
}

TEST(ScoreSummary, AccuraciesCountOnlyScoredCasesAndTheMatrixHasTheirSites) {
  const Truth nic = score::truth_of_verdict(kPlan, verdict({inject(2, "net", "nic_down")}, "detected"));
  const Truth code = score::truth_of_verdict(kPlan, verdict({inject(1, "api", "error")}, "detected"));
  std::vector<score::ScoredCase> cases = {
      score::score_case("a", "run", nic, diagnosis({2}, "nic", "crashed or died")),
      score::score_case("b", "run", nic, diagnosis({1}, "dead_rank", "crashed or died")),
      score::score_case("c", "run", code, diagnosis({1}, "dead_rank", "crashed or died")),
  };
  const auto s = score::summarise(cases, {});
  EXPECT_EQ(s.rank.scored, 3u);
  EXPECT_EQ(s.rank.right, 2u);
  EXPECT_EQ(s.site.scored, 2u);  // the API error code models no site
  EXPECT_EQ(s.site.right, 1u);
  EXPECT_EQ(s.confusion.at("nic").at("nic"), 1u);
  EXPECT_EQ(s.confusion.at("nic").at("dead_rank"), 1u);
  EXPECT_EQ(s.confusion.at("(no site)").at("dead_rank"), 1u);
  const auto j = score::score_json(s);
  EXPECT_DOUBLE_EQ(j["accuracy"]["rank"]["accuracy"].get<double>(), 2.0 / 3.0);
}

TEST(ScoreInputs, FindsRunsAndTicketsAndNamesWhatHoldsNone) {
  const fs::path root = fs::temp_directory_path() / ("ncclfi-score-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "out/net-x/20260101T000000.000Z/attempt-0");
  std::ofstream(root / "out/net-x/20260101T000000.000Z/plan.json") << kPlan.dump();
  fs::create_directory_symlink("20260101T000000.000Z", root / "out/net-x/latest");
  fs::create_directories(root / "out/suites/20260101T000000.000Z");
  fs::create_directories(root / "keys/abc/runs");
  std::ofstream(root / "keys/abc/key.json") << "{}";
  fs::create_directories(root / "empty");
  std::vector<std::string> errors;
  const auto found = score::find_cases(
      {(root / "out").string(), (root / "keys").string(), (root / "empty").string()}, errors);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].kind, "run");
  EXPECT_EQ(found[0].path, (root / "out/net-x/latest").string());
  EXPECT_EQ(found[1].kind, "lab");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("empty"), std::string::npos);
  // A run without its verdict cannot be scored: an error with the file, never a crash.
  const auto s = score::score_inputs({found[0]}, {});
  EXPECT_TRUE(s.cases.empty());
  ASSERT_EQ(s.errors.size(), 1u);
  EXPECT_NE(s.errors[0].find("verdict.json"), std::string::npos);
  fs::remove_all(root);
}
