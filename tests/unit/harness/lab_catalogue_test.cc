// The lab catalogue's draws (harness/apps/labs/lab_catalogue.cc): the shipped labs of scenarios/labs/,
// resolved for many seeds through the path `ncclfi lab start` takes (draw_variant, then resolve_variant),
// without running a job; and the format's checks on labs of the test's own.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>

#include <unistd.h>

#include "lab_catalogue.h"

namespace ncclfi::cli::lab {
namespace {

namespace fs = std::filesystem;

const std::vector<Lab>& shipped() {
  static const std::vector<Lab> labs = load_lab_catalogue(std::string(NCCLFI_SOURCE_DIR) + "/scenarios/labs");
  return labs;
}

// What a student must name: the cause, the ranks and the details.
std::string answer_of(const LabVariant& v) {
  return v.answer.at("cause").dump() + v.answer.value("ranks", nlohmann::json()).dump() +
         v.answer.value("details", nlohmann::json::object()).dump();
}

// Every CPU lab, and every GPU lab named for a symptom (the GPU labs of one cause, gpu-hung-rank, predate
// them and stay as they were).
TEST(LabCatalogue, TwentyStudentsOfASymptomLabGetAtLeastSixDifferentAnswers) {
  std::mt19937_64 random(20261203);
  size_t cpu_labs = 0, gpu_labs = 0;
  for (const Lab& lab : shipped()) {
    if (lab.needs != "cpu" && lab.causes.size() < 3) continue;
    ++(lab.needs == "cpu" ? cpu_labs : gpu_labs);
    EXPECT_GE(lab.causes.size(), 3U) << lab.name << ": a symptom lab draws from several causes";
    std::set<std::string> answers;
    for (int student = 0; student < 20; ++student)
      answers.insert(answer_of(resolve_variant(lab, draw_variant(lab, random()))));
    EXPECT_GE(answers.size(), 6U) << lab.name;
  }
  EXPECT_GE(cpu_labs, 7U);
  EXPECT_GE(gpu_labs, 3U);  // gpu-slow-no-error, gpu-job-died, gpu-error-codes
}

TEST(LabCatalogue, EveryCauseOfEveryLabIsDrawnAndRankZeroIsAnAnswer) {
  std::mt19937_64 random(7);
  bool rank_zero = false;
  for (const Lab& lab : shipped()) {
    std::map<std::string, int> drawn;
    for (int i = 0; i < 500; ++i) {
      const LabVariant v = resolve_variant(lab, draw_variant(lab, random()));
      ++drawn[v.cause_id];
      const auto& ranks = v.answer.value("ranks", nlohmann::json());
      rank_zero = rank_zero || (ranks.is_array() && ranks.size() == 1 && ranks[0] == 0);
    }
    for (const LabCause& cause : lab.causes)
      EXPECT_GT(drawn[cause.id], 0) << lab.name << ": cause " << cause.id << " is never drawn";
  }
  EXPECT_TRUE(rank_zero) << "no lab ever has rank 0 as its answer";
}

TEST(LabCatalogue, ASeedDrawsOneVariantAndANamedCauseDrawsOnlyItsOwn) {
  const Lab& lab = shipped().front();
  for (uint64_t seed = 0; seed < 50; ++seed) {
    EXPECT_EQ(draw_variant(lab, seed), draw_variant(lab, seed));
    for (const LabCause& cause : lab.causes)
      EXPECT_EQ(resolve_variant(lab, draw_variant(lab, seed, cause.id)).cause_id, cause.id);
  }
  EXPECT_THROW(draw_variant(lab, 1, std::string("no-such-cause")), std::runtime_error);
  EXPECT_NE(random_seed(), random_seed());
}

// A lab of the test's own, written to a catalogue directory of its own.
class LabFormat : public ::testing::Test {
 protected:
  static nlohmann::json cause(const std::string& id, const std::string& job_name) {
    const nlohmann::json scenario = {
        {"name", "lab-job"},
        {"summary", "a lab job"},
        {"workload", {{"builtin", "cpu-ring"}, {"ranks", 4}, {"args", {"--iters", "{var:iters}"}}}},
        {"launcher", {{"kind", "local"}}},
        {"layers", {"net"}},
        {"faults", nlohmann::json::array()},
        {"expect", {{"outcome", "clean"}}}};
    return {{"id", id},
            {"site", "nic"},
            {"draw", {{"rank", {0, 1, 2, 3}}, {"iters", {"10", "20"}}}},
            {"jobs", {{{"name", job_name}, {"about", "the job"}, {"scenario", scenario}}}},
            {"answer", {{"cause", "nic"}, {"ranks", {"{var:rank}"}}}},
            {"hints", {"rank {var:rank}"}}};
  }
  static nlohmann::json lab_doc() {
    return {{"lab", "mine"},
            {"title", "t"},
            {"topic", "t"},
            {"needs", "cpu"},
            {"symptom", "s"},
            {"briefing", "b"},
            {"causes", {cause("a", "training"), cause("b", "training")}}};
  }
  // Loads a catalogue holding `doc` alone; the error's text, or "" when it loads.
  std::string load_error(const nlohmann::json& doc) {
    const fs::path dir = fs::temp_directory_path() / ("ncclfi-lab-format-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::ofstream(dir / "mine.json") << doc.dump();
    std::string error;
    try {
      const auto labs = load_lab_catalogue(dir.string());
      loaded_ = labs.front();
    } catch (const std::exception& e) {
      error = e.what();
    }
    fs::remove_all(dir);
    return error;
  }
  Lab loaded_;
};

TEST_F(LabFormat, EveryCombinationOfADrawIsAVariant) {
  ASSERT_EQ(load_error(lab_doc()), "");
  EXPECT_EQ(loaded_.variant_count(), 16U);  // two causes of 4 ranks x 2 iteration counts
  const LabVariant last = resolve_variant(loaded_, 15);
  EXPECT_EQ(last.cause_id, "b");
  EXPECT_EQ(last.values, (nlohmann::json{{"iters", "20"}, {"rank", 3}}));
  EXPECT_EQ(last.answer.at("ranks"), nlohmann::json({3}));
  EXPECT_EQ(last.hints, nlohmann::json({"rank 3"}));
  EXPECT_EQ(last.site, "nic");
}

TEST_F(LabFormat, ALabThatWouldGiveItsCauseAwayOrCannotRunIsRefused) {
  nlohmann::json doc = lab_doc();
  doc["causes"][1] = cause("b", "other-job");  // its folders would tell the causes apart
  EXPECT_NE(load_error(doc).find("cause b's jobs (names, about) differ from cause a's"), std::string::npos);
  doc = lab_doc();
  doc["causes"][1]["site"] = "the-moon";
  EXPECT_NE(load_error(doc).find("/causes/1/site: unknown site the-moon"), std::string::npos);
  doc = lab_doc();
  doc["causes"][0]["draw"]["rank"] = nlohmann::json::array();
  EXPECT_NE(load_error(doc).find("/draw/rank: expected a non-empty array"), std::string::npos);
  doc = lab_doc();
  doc["causes"][0]["draw"]["iters"] = {"10", 20};  // a number where the scenario needs a string
  EXPECT_NE(load_error(doc).find("expected a string, got 20"), std::string::npos) << load_error(doc);
  doc = lab_doc();
  doc["causes"][1]["id"] = "a";
  EXPECT_NE(load_error(doc).find("the id a is there twice"), std::string::npos);
  doc = lab_doc();
  doc["causes"][0]["answer"]["cause"] = "gremlins";
  EXPECT_NE(load_error(doc).find("unknown cause gremlins"), std::string::npos);
}

}  // namespace
}  // namespace ncclfi::cli::lab
