// A lab's variant is drawn from a secret seed: `lab start` takes a random one unless the instructor
// gives --seed, keeps it in the key directory only, and a student's name no longer decides the variant,
// so starting a second copy under the same name tells nothing about the first. The lab here runs a
// one-line shell job (a catalogue of the test's own): two causes of four ranks each.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "cli_process.h"
#include "lab_fixture.h"

namespace ncclfi::e2e {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

json tiny_cause(const std::string& id, const std::string& cause) {
  return {{"id", id},
          {"site", "nic"},
          {"draw", {{"rank", {0, 1, 2, 3}}}},
          {"jobs",
           {{{"name", "training"},
             {"about", "the job"},
             {"scenario", shell_scenario("lab-job", 2, "echo step 1", {{"outcome", "clean"}}, 20)}}}},
          {"answer", {{"cause", cause}, {"ranks", {"{var:rank}"}}}},
          {"hints", {"look at rank {var:rank}"}}};
}

class LabSeed : public LabCourse {
 protected:
  // A tiny lab of two causes, in place of tiny_lab().
  LabSeed() {
    write_lab({{"lab", "tiny"},
               {"title", "A tiny lab"},
               {"topic", "tests"},
               {"needs", "cpu"},
               {"symptom", "nothing happened"},
               {"briefing", "which rank?"},
               {"causes", {tiny_cause("broken-nic", "nic"), tiny_cause("dead-node", "dead_rank")}}});
  }
  // Starts the lab for `student` into workspace `name`; returns the workspace's key.json.
  json start(const std::string& student, const std::string& name, const std::vector<std::string>& more = {}) {
    const std::string ws = dir_.path + "/" + name;
    std::vector<std::string> args = {"lab", "start",     "tiny", "--student",   student,   "--dir",
                                     ws,    "--key-dir", keys_,  "--catalogue", catalogue_};
    args.insert(args.end(), more.begin(), more.end());
    const auto r = run_cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    return read_json(keys_ + "/" + read_json(ws + "/lab.json").at("ticket").get<std::string>() + "/key.json");
  }
};

TEST_F(LabSeed, TheSameStudentNameDrawsDifferentVariantsAndTheSeedIsNotInTheWorkspace) {
  std::set<int> variants;
  for (int copy = 0; copy < 8 && variants.size() < 2; ++copy) {
    const std::string name = "ws-" + std::to_string(copy);
    const json key = start("ada", name);
    variants.insert(key.at("variant").get<int>());
    const std::string seed = std::to_string(key.at("seed").get<uint64_t>());
    ASSERT_GE(seed.size(), 1U);
    // Nothing in the workspace holds the seed, the variant or the drawn cause.
    const json ticket = read_json(dir_.path + "/" + name + "/lab.json");
    for (const char* field : {"seed", "variant", "values", "cause_id", "answer"})
      EXPECT_FALSE(ticket.contains(field)) << field << " in " << ticket.dump();
    for (const auto& entry : fs::recursive_directory_iterator(dir_.path + "/" + name)) {
      if (!entry.is_regular_file()) continue;
      const std::string text = read_text(entry.path().string());
      if (seed.size() >= 6) {
        EXPECT_FALSE(contains(text, seed)) << entry.path() << " holds the seed " << seed;
      }
      EXPECT_FALSE(contains(text, key.at("cause_id").get<std::string>())) << entry.path();
    }
  }
  // Eight starts of four-by-two variants all alike by chance: one in 8^7.
  EXPECT_EQ(variants.size(), 2U) << "eight starts under the name ada all drew the same variant";
}

TEST_F(LabSeed, AnInstructorsSeedOrCauseDrawsWhatLabDrawPrints) {
  const auto drawn = run_cli({"lab", "draw", "tiny", "--seed", "42", "--catalogue", catalogue_});
  ASSERT_EQ(drawn.exit_code, 0) << drawn.err;
  const json draw = json::parse(drawn.out);
  const json key = start("grace", "ws-grace", {"--seed", "42"});
  EXPECT_EQ(key.at("seed"), 42);
  EXPECT_EQ(key.at("variant"), draw.at("variant"));
  EXPECT_EQ(key.at("answer"), draw.at("answer"));
  EXPECT_EQ(key.at("cause_id"), draw.at("cause_id"));
  EXPECT_EQ(key.at("site"), "nic");
  const json dead = start("linus", "ws-linus", {"--seed", "42", "--cause", "dead-node"});
  EXPECT_EQ(dead.at("answer").at("cause"), "dead_rank");
  const auto unknown = run_cli({"lab", "draw", "tiny", "--cause", "gremlins", "--catalogue", catalogue_});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_TRUE(contains(unknown.err, "lab tiny has no cause gremlins (causes: broken-nic dead-node)"))
      << unknown.err;
}

// A job whose fault never fires (here: a kill due 15 s after launch, in a job that ends at once)
// would hand out a workspace that shows no failure, graded against one: lab start runs it three times,
// then refuses with an error and writes no workspace.
TEST_F(LabSeed, AJobWhoseFaultNeverFiresIsRunAgainThenRefused) {
  json cause = tiny_cause("late-kill", "dead_rank");
  json& scenario = cause["jobs"][0]["scenario"];
  scenario["faults"] = {{{"id", "lab-hidden"},
                         {"layer", "proc"},
                         {"kind", "kill"},
                         {"target", {{"ranks", {1}}}},
                         {"trigger", {{"after_ms", 15000}}}}};
  scenario["expect"] = {{"outcome", "detected"}};
  write_lab({{"lab", "tiny"},
             {"title", "A tiny lab"},
             {"topic", "tests"},
             {"needs", "cpu"},
             {"symptom", "nothing happened"},
             {"briefing", "which rank?"},
             {"causes", {cause}}});
  const std::string ws = dir_.path + "/ws-never";
  const auto r = run_cli({"lab", "start", "tiny", "--student", "ada", "--dir", ws, "--key-dir", keys_,
                          "--catalogue", catalogue_});
  EXPECT_NE(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.err, "the job's fault never fired in 3 runs")) << r.err;
  size_t again = 0;
  for (size_t at = r.err.find("running it again"); at != std::string::npos;
       at = r.err.find("running it again", at + 1))
    ++again;
  EXPECT_EQ(again, 2U) << r.err;
  EXPECT_FALSE(fs::exists(ws + "/lab.json"));
}

}  // namespace
}  // namespace ncclfi::e2e
