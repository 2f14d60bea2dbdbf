// Hostile scenario files: every one is refused by `ncclfi validate` with exit 2 and a message naming
// the file and the JSON pointer, quickly, never with a crash, a hang or a raw library exception.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <fstream>

#include "cli_process.h"

namespace ncclfi::e2e {
namespace {

using nlohmann::json;

json good_scenario() {
  return shell_scenario("good", 2, "exit 0", {{"outcome", "clean"}});
}

std::string write_text(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string path = dir + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// Validates `file`; expects exit 2 and `needle` (after "FILE: ") in stderr.
void expect_refused(const std::string& file, const std::string& needle) {
  const auto r = run_cli({"validate", file}, 60);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find(file + ": " + needle), std::string::npos) << r.err;
}

void expect_refused(const json& scenario, const std::string& needle) {
  TempDir dir;
  expect_refused(write_scenario(dir.path, scenario), needle);
}

TEST(RobustValidate, DeadlineBeyondWhatTheClocksHold) {
  json s = good_scenario();
  s["deadline_s"] = 1e10;
  expect_refused(s, "/deadline_s: expected a number of seconds > 0 and at most 604800");
}

TEST(RobustValidate, NumberOutOfRangeNamesTheFile) {
  TempDir dir;
  json s = good_scenario();
  std::string text = s.dump();
  text.insert(1, R"("grace_s": 1e400, )");
  expect_refused(write_text(dir.path, "big.json", text), "/: expected valid JSON with numbers in range");
}

TEST(RobustValidate, RestartMaxBeyondAnInt) {
  json s = good_scenario();
  s["restart"] = {{"max", 2147483648LL}};
  expect_refused(s, "/restart/max: expected an integer from 0 to 100");
}

TEST(RobustValidate, DuplicateKeyIsRefusedWithItsPointer) {
  TempDir dir;
  std::string text = good_scenario().dump();
  const auto at = text.find(R"("ranks":2)");
  ASSERT_NE(at, std::string::npos);
  text.insert(at, R"("ranks":3,)");
  expect_refused(write_text(dir.path, "dup.json", text), "/workload/ranks: expected each key once");
}

TEST(RobustValidate, LongNameIsRefused) {
  TempDir dir;
  json s = good_scenario();
  s["name"] = std::string(300, 'n');
  expect_refused(write_text(dir.path, "long.json", s.dump()), "/name: expected a name of at most 100");
}

TEST(RobustValidate, ReservedNameIsRefused) {
  json s = good_scenario();
  s["name"] = "suites";
  expect_refused(s, "/name: expected a name other than \"suites\"");
}

TEST(RobustValidate, OversizedFileIsRefusedBeforeItIsRead) {
  TempDir dir;
  expect_refused(write_text(dir.path, "huge.json", std::string(17 << 20, '[')),
                 "/: expected a readable scenario file, got a file that is larger than");
}

TEST(RobustValidate, DeepNestingIsRefusedWithItsPointer) {
  TempDir dir;
  expect_refused(write_text(dir.path, "deep.json", R"({"tags":)" + std::string(1 << 20, '[')), "/tags");
}

TEST(RobustValidate, FifoIsRefusedWithoutBlocking) {
  TempDir dir;
  const std::string fifo = dir.path + "/scenario.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_refused(fifo,
                 "/: expected a readable scenario file, got a file that is not a regular file (a FIFO)");
}

// Before: the NUL ended the message there; the problems after it were lost.
TEST(RobustValidate, NulInKeyIsEscapedAndLaterProblemsSurvive) {
  TempDir dir;
  // (With a name it is a scenario; {"a\u0000b":1,"faults":[]} alone is read as a bare fault plan.)
  const std::string file =
      write_text(dir.path, "nul.json", R"({"a\u0000b":1,"name":"bad name","faults":[]})");
  const auto r = run_cli({"validate", file});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(file + ": /a\\u0000b: expected no such key"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(file + ": /name: expected"), std::string::npos) << r.err;
}

// Before: a pattern nested 20000 deep crashed validate inside std::regex.
TEST(RobustValidate, DeeplyNestedRegexIsRefused) {
  json s = good_scenario();
  s["log_patterns"] = {
      {{"regex", std::string(20000, '(') + "a" + std::string(20000, ')')}, {"mechanism", "api_error"}}};
  expect_refused(s,
                 "/log_patterns/0/regex: expected a valid RE2 regular expression (longer than 1024 bytes)");
}

TEST(RobustValidate, LogMatchesOutsideRe2AreRefused) {
  json s = good_scenario();
  s["expect"]["log_matches"] = {R"((a)\1)"};
  expect_refused(s, "/expect/log_matches/0: expected a valid RE2 regular expression");
}

// Before: NCCLFI_PLAN in env ran a fault in the baseline; NCCLFI_HARNESS_ID escaped the orphan guard.
TEST(RobustValidate, ReservedVariablesInEnvAreRefused) {
  for (const char* name : {"NCCLFI_PLAN", "NCCLFI_HARNESS_ID", "LD_PRELOAD", "NCCL_NET_PLUGIN"}) {
    json s = good_scenario();
    s["env"] = {{name, "x"}};
    expect_refused(s, std::string("/env/") + name + ": expected no variable the harness sets");
  }
}

}  // namespace
}  // namespace ncclfi::e2e

namespace ncclfi::e2e {
namespace {

// Every output line is tried against every scenario pattern: their number is bounded too.
TEST(RobustValidate, TooManyLogPatternsAreRefused) {
  json s = good_scenario();
  s["log_patterns"] = json::array();
  for (int i = 0; i < 65; ++i)
    s["log_patterns"].push_back({{"regex", "x" + std::to_string(i)}, {"mechanism", "api_error"}});
  expect_refused(s, "/log_patterns: expected an array of at most 64 patterns");
}

}  // namespace
}  // namespace ncclfi::e2e
