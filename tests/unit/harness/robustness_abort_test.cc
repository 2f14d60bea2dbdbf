// `ncclfi abort` against a forged harness.json: a record that names a live process which is not the
// run's harness (a sleeper of this user), or the harness id of another drill, is refused with a reason
// and nothing is signalled or written.
#include <gtest/gtest.h>

#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "ncclfi/event_log.h"
#include "run_control.h"
#include "sleeper.h"
#include "unit_temp_dir.h"

namespace ncclfi::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using ncclfi::test_support::TempDir;

// A run directory whose harness.json is `record` (plus this host's name).
std::string run_with_record(const TempDir& dir, json record) {
  const std::string run = dir.path + "/run";
  fs::create_directories(run);
  std::ofstream(run + "/plan.json") << json{{"seed", 1}, {"control", true}, {"faults", json::array()}}.dump();
  record["host"] = host_name();
  std::ofstream(run + "/harness.json") << record.dump();
  return run;
}

struct CliResult {
  int exit_code = -1;
  std::string output;
};

CliResult abort_run_dir(const std::string& run) {
  const std::string command = std::string(NCCLFI_CLI) + " abort " + run + " --timeout-s 1 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  CliResult r;
  if (pipe == nullptr) return r;
  char buf[512];
  size_t n = 0;
  while ((n = ::fread(buf, 1, sizeof buf, pipe)) > 0) r.output.append(buf, n);
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

bool alive(pid_t pid) {
  return ::waitpid(pid, nullptr, WNOHANG) == 0;
}

// Before: the record was taken at its word: abort wrote its request into the run and waited for the
// sleeper to "confirm" until its timeout.
TEST(AbortIdentity, ARecordNamingALiveUnrelatedProcessIsRefused) {
  TempDir dir;
  const pid_t sleeper = test_support::start_sleeper({"PATH=/bin"});
  ASSERT_GT(sleeper, 0);
  // Even with the sleeper's true start time and an id of its pid: it is no ncclfi harness.
  const std::string run = run_with_record(dir, {{"pid", sleeper},
                                                {"harness_id", std::to_string(sleeper) + "-1"},
                                                {"start_ticks", process_start_ticks(sleeper)}});
  const CliResult r = abort_run_dir(run);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(run + "/harness.json names pid " + std::to_string(sleeper) +
                          ", which is not this run's harness (it is not an ncclfi program (sleep))"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(run + "/abort-requested"));
  EXPECT_FALSE(fs::exists(run + "/events.jsonl"));
  EXPECT_TRUE(alive(sleeper));
  test_support::stop_sleepers({sleeper});
}

// Before: a record naming a dead pid and another drill's harness id had abort kill that drill's ranks.
TEST(AbortIdentity, ARecordOfAGoneHarnessCannotKillAnotherDrillsRanks) {
  TempDir dir;
  const std::string victim_id = "1-" + std::to_string(::getpid());  // another drill's id
  const pid_t rank = test_support::start_sleeper({"PATH=/bin", "NCCLFI_HARNESS_ID=" + victim_id});
  ASSERT_GT(rank, 0);
  const pid_t gone = fork();
  if (gone == 0) _exit(0);
  ASSERT_EQ(waitpid(gone, nullptr, 0), gone);
  const std::string run = run_with_record(dir, {{"pid", gone}, {"harness_id", victim_id}});
  const CliResult r = abort_run_dir(run);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("is gone"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("killed"), std::string::npos) << r.output;
  EXPECT_TRUE(alive(rank)) << "abort killed another drill's rank";
  test_support::stop_sleepers({rank});
}

// The start time is read from /proc/PID/stat's 22nd field, after the command name, which may hold
// spaces and parentheses.
TEST(AbortIdentity, StartTicksAreThoseOfTheProcess) {
  const std::string mine = process_start_ticks(::getpid());
  ASSERT_FALSE(mine.empty());
  EXPECT_EQ(mine.find_first_not_of("0123456789"), std::string::npos) << mine;
  const pid_t sleeper = test_support::start_sleeper({"PATH=/bin"});
  EXPECT_NE(process_start_ticks(sleeper), "");
  test_support::stop_sleepers({sleeper});
  EXPECT_EQ(process_start_ticks(sleeper), "");
}

}  // namespace
}  // namespace ncclfi::cli
