// Hostile YAML: a few hundred bytes of nested aliases ("billion laughs") must be refused before they
// expand, within a few megabytes, and a duplicate key is an error as it is in JSON.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "scenario.h"
#include "scenario_yaml.h"

namespace ncclfi::cli {
namespace {

// Nine levels of nine aliases each: 9^9 (387 million) strings once expanded, from about 400 bytes.
std::string billion_laughs() {
  std::string text = "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n";
  for (char c = 'b'; c <= 'i'; ++c) {
    const char p = static_cast<char>(c - 1);
    text += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 9; ++i) text += std::string(i ? "," : "") + "*" + p;
    text += "]\n";
  }
  return text;
}

struct ChildRun {
  int exit_code = -1;
  long max_rss_kb = 0;
};

// `ncclfi validate FILE` in a child, with its peak resident memory.
ChildRun validate(const std::string& file) {
  const pid_t pid = fork();
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    execl(NCCLFI_CLI, NCCLFI_CLI, "validate", file.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  ChildRun run;
  int status = 0;
  rusage usage{};
  if (wait4(pid, &status, 0, &usage) == pid && WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
  run.max_rss_kb = usage.ru_maxrss;
  return run;
}

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = std::string(::testing::TempDir()) + name;
  std::ofstream(path) << text;
  return path;
}

TEST(RobustYaml, ABillionLaughsIsRefusedBeforeItExpands) {
  const std::string bomb = billion_laughs();
  ASSERT_LT(bomb.size(), 500u);
  LineMap lines;
  try {
    yaml_to_json(bomb, lines);
    FAIL() << "the bomb expanded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("expands to more than 50000 values"), std::string::npos) << e.what();
  }
  // The same through the command, measured: within 10 MB of what validating a plain file costs.
  const ChildRun plain = validate(write_temp("plain.yaml", "name: x\n"));
  const ChildRun refused = validate(write_temp("bomb.yaml", bomb));
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_EQ(plain.exit_code, 2);  // not a scenario either: the point is its memory
  EXPECT_LT(refused.max_rss_kb - plain.max_rss_kb, 10 * 1024)
      << "bomb " << refused.max_rss_kb << " KB vs plain " << plain.max_rss_kb << " KB";
}

TEST(RobustYaml, ADuplicateKeyIsAnErrorThatNamesItsLine) {
  LineMap lines;
  try {
    yaml_to_json("name: a\nworkload:\n  ranks: 2\n  ranks: 4\n", lines);
    FAIL() << "a duplicate key was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "line 4: duplicate key \"ranks\" (each key once per mapping)");
  }
  // The same key in two different mappings is no duplicate.
  EXPECT_NO_THROW(yaml_to_json("a: {ranks: 2}\nb: {ranks: 4}\n", lines));
}

TEST(RobustYaml, ModestAliasesStillWork) {
  LineMap lines;
  const auto doc = yaml_to_json("base: &args [--iters, '40']\nworkload: {args: *args}\n", lines);
  EXPECT_EQ(doc["workload"]["args"], nlohmann::json({"--iters", "40"}));
}

}  // namespace
}  // namespace ncclfi::cli
