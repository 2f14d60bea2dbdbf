// `ncclfi diagnose` as a user runs it: on the logs of a job ncclfi never ran (tests/data/diagnose/).
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "cli_process.h"

namespace ncclfi::e2e {
namespace {

const std::string kData = NCCLFI_SOURCE_DIR "/tests/data/diagnose/";

TEST(CliDiagnose, NamesNodeTwoAndTheNicWithJson) {
  TempDir dir;
  const std::string json_path = dir.path + "/diagnosis.json";
  const auto r = run_cli({"diagnose", kData + "nic-down", "--json", json_path});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("Culprit:    host node2 (ranks 2, 3)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("node2-kern.log:3"), std::string::npos) << r.out;
  std::ifstream in(json_path);
  ASSERT_TRUE(in) << json_path;
  std::stringstream text;
  text << in.rdbuf();
  const auto j = nlohmann::json::parse(text.str());
  EXPECT_TRUE(j["failure"].get<bool>());
  EXPECT_EQ(j["culprit"]["host"], "node2");
  EXPECT_EQ(j["culprit"]["ranks"], nlohmann::json::array({2, 3}));
  EXPECT_EQ(j["site"], "nic");
  EXPECT_EQ(j["first_failure"]["rank"], 2);
  EXPECT_EQ(j["first_failure"]["file"], "node2.log");
  EXPECT_GT(j["confidence"].get<double>(), 0.0);
  EXPECT_FALSE(j["evidence"].empty());
}

// A slow job prints no error: the node files an operator collected (nodes/HOST/: lspci -vv, the kernel's
// log, ibstat) hold the answer, and they are that host's.
TEST(CliDiagnose, ReadsTheNodesToolsAndNamesTheDowngradedPcieLink) {
  TempDir dir;
  const std::string json_path = dir.path + "/diagnosis.json";
  const auto r = run_cli({"diagnose", kData + "pcie-slow", "--json", json_path});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::ifstream in(json_path);
  ASSERT_TRUE(in) << json_path;
  std::stringstream text;
  text << in.rdbuf();
  const auto j = nlohmann::json::parse(text.str());
  EXPECT_EQ(j["culprit"]["host"], "gpu-node02") << j.dump(2);
  EXPECT_EQ(j["culprit"]["ranks"], nlohmann::json::array({1})) << j.dump(2);
  EXPECT_EQ(j["site"], "pcie") << j.dump(2);
  EXPECT_NE(r.out.find("lspci-vv.txt:3"), std::string::npos) << r.out;
}

// Logs are bytes: a line that is not UTF-8 still gives valid JSON.
TEST(CliDiagnose, BytesThatAreNotUtf8StillGiveJson) {
  TempDir dir;
  std::ofstream(dir.path + "/rank-0.log")
      << "n1:1:2 [0] misc/socket.cc:49 NCCL WARN socketProgress: Connection "
         "closed by remote peer 10.0.0.2<5000> \xff\xfe\n";
  const auto r = run_cli({"diagnose", dir.path + "/rank-0.log", "--json", dir.path + "/d.json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::ifstream in(dir.path + "/d.json");
  std::stringstream text;
  text << in.rdbuf();
  const auto j = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(j.is_discarded()) << text.str();
  EXPECT_EQ(j["evidence"].size(), 1U);
}

TEST(CliDiagnose, CleanLogsExitOneAndAMissingPathTwo) {
  const auto clean = run_cli({"diagnose", kData + "clean"});
  EXPECT_EQ(clean.exit_code, 1) << clean.out << clean.err;
  EXPECT_NE(clean.out.find("No failure"), std::string::npos) << clean.out;
  const auto missing = run_cli({"diagnose", kData + "no-such-dir"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("no such file or directory"), std::string::npos) << missing.err;
}

}  // namespace
// A verdict carries the diagnosis of its own logs beside the truth, and so does its drill report; a
// killed rank is one the logs name (its peers lose it, the harness saw the signal).
TEST(CliDiagnose, AVerdictShowsTheLogsAloneDiagnosisBesideTheTruth) {
  TempDir dir;
  const auto r =
      run_cli({"run", "-q", "--out", dir.path, NCCLFI_SOURCE_DIR "/scenarios/cpu/proc-kill-rank.json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::ifstream in(dir.path + "/proc-kill-rank/latest/verdict.json");
  std::stringstream text;
  text << in.rdbuf();
  const auto v = nlohmann::json::parse(text.str());
  ASSERT_TRUE(v.contains("diagnosis")) << text.str().substr(0, 2000);
  const auto& d = v["diagnosis"];
  EXPECT_EQ(d["truth"]["ranks"], nlohmann::json::array({3}));
  EXPECT_EQ(d["truth"]["site"], "dead_rank");
  EXPECT_TRUE(d["failure"].get<bool>());
  // Whatever the diagnosis said, the agreement is computed from it and the truth, not assumed.
  EXPECT_EQ(d["agrees"]["ranks"].get<bool>(), d["ranks"] == d["truth"]["ranks"]);
  EXPECT_EQ(d["agrees"]["site"].get<bool>(), d["site"] == d["truth"]["site"]);
  std::ifstream md(dir.path + "/proc-kill-rank/latest/drill-report.md");
  std::stringstream report;
  report << md.rdbuf();
  EXPECT_NE(report.str().find("### Diagnosis from the logs alone"), std::string::npos) << report.str();
  EXPECT_NE(report.str().find("| ranks | "), std::string::npos) << report.str();
}

// `ncclfi score` over a clean run and a killed rank: two cases, figures, a matrix, exit 0 without floors
// and 1 under a floor no diagnosis can reach.
TEST(CliScore, ScoresRunsAndFailsUnderItsFloor) {
  TempDir dir;
  const auto r =
      run_cli({"run", "-q", "--out", dir.path, NCCLFI_SOURCE_DIR "/scenarios/cpu/cpu-ring-clean.json",
               NCCLFI_SOURCE_DIR "/scenarios/cpu/proc-kill-rank.json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto s = run_cli({"score", dir.path, "--json", dir.path + "/score.json"});
  ASSERT_EQ(s.exit_code, 0) << s.out << s.err;
  EXPECT_NE(s.out.find("rank and site:"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("Sites (rows: the truth"), std::string::npos) << s.out;
  std::ifstream in(dir.path + "/score.json");
  std::stringstream text;
  text << in.rdbuf();
  const auto j = nlohmann::json::parse(text.str());
  ASSERT_EQ(j["cases"].size(), 2U);
  EXPECT_EQ(j["accuracy"]["rank"]["scored"], 2);
  EXPECT_EQ(j["cases"][0]["truth"]["symptom"], "none");  // cpu-ring-clean sorts first
  EXPECT_EQ(j["cases"][1]["truth"]["ranks"], nlohmann::json::array({3}));
  // A clean run gives no site to score: a floor on the site is not shown to be met, so it fails.
  const auto floor = run_cli({"score", dir.path + "/cpu-ring-clean", "--min-site", "0.5"});
  EXPECT_EQ(floor.exit_code, 1) << floor.out << floor.err;
  EXPECT_NE(floor.err.find("below the floor: site"), std::string::npos) << floor.err;
  EXPECT_EQ(run_cli({"score", dir.path + "/cpu-ring-clean", "--min-rank", "1.0"}).exit_code, 0);
  const auto nothing = run_cli({"score", dir.path + "/cpu-ring-clean/latest/attempt-0"});
  EXPECT_EQ(nothing.exit_code, 2) << nothing.out << nothing.err;
}

}  // namespace ncclfi::e2e
