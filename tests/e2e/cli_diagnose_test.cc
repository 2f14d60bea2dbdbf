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
}  // namespace ncclfi::e2e
