// `arm`, `disarm` and `abort` act only on a job that is running, here, as the user's own: a finished
// run, a run whose harness is gone and another user's run are refused with the reason, exit 2, and
// nothing is sent to it or written into its record.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "cli_process.h"

namespace ncclfi::e2e {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

std::string this_host() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return host;
}

// A run directory as the harness leaves it: plan.json, harness.json naming `harness_pid` on this host.
std::string run_dir_with_harness(const TempDir& dir, int harness_pid) {
  const std::string run = dir.path + "/run";
  fs::create_directories(run);
  std::ofstream(run + "/plan.json")
      << json{{"seed", 1},
              {"control", true},
              {"faults", {{{"id", "slow"}, {"layer", "net"}, {"kind", "delay"}, {"params", {{"ms", 5}}}}}}}
             .dump();
  std::ofstream(run + "/harness.json") << json{
      {"pid", harness_pid},
      {"harness_id", "ncclfi-test-no-such-harness"},
      {"host", this_host()}}.dump();
  std::ofstream(run + "/events.jsonl") << R"({"ts_ns":1,"rank":0,"event":"start"})"
                                       << "\n";
  return run;
}

// Every file of the run with its contents: what "nothing was written" compares.
std::map<std::string, std::string> snapshot(const std::string& run) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(run)) {
    if (e.is_regular_file()) files[e.path().string()] = read_text(e.path().string());
  }
  return files;
}

// A process id that existed and is gone.
int dead_pid() {
  const auto r = run_program({"/bin/sh", "-c", "echo $$"});
  return std::stoi(r.out);
}

void expect_every_command_refused(const std::string& run, const std::string& why) {
  const auto before = snapshot(run);
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"arm", run, "slow"}, {"disarm", run, "slow"}, {"abort", run, "--timeout-s", "1"}}) {
    const auto r = run_cli(args, 30);
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.out << r.err;
    EXPECT_TRUE(contains(r.out + r.err, why)) << args[0] << ": " << r.out << r.err;
    EXPECT_FALSE(contains(r.out, "armed") || contains(r.out, "torn down")) << args[0] << ": " << r.out;
    EXPECT_EQ(snapshot(run), before) << args[0] << " wrote into the run's record";
  }
}

TEST(CliControl, AFinishedRunIsRefusedAndLeftAsItIs) {
  TempDir dir;
  const std::string run = run_dir_with_harness(dir, ::getpid());
  std::ofstream(run + "/verdict.json") << R"({"scenario": "x", "status": "pass"})";
  expect_every_command_refused(run, "has finished");
}

TEST(CliControl, ARunWhoseHarnessIsGoneIsRefused) {
  TempDir dir;
  const std::string run = run_dir_with_harness(dir, dead_pid());
  expect_every_command_refused(run, "is gone");
}

TEST(CliControl, AnotherUsersRunIsRefused) {
  TempDir dir;
  const std::string run = run_dir_with_harness(dir, ::getpid());
  // Only root can give a file away; the record then belongs to `nobody`.
  if (::chown((run + "/harness.json").c_str(), 65534, 65534) != 0) GTEST_SKIP() << "not root: cannot chown";
  expect_every_command_refused(run, "only its owner may control it");
}

TEST(CliControl, ARunThatNeverStartedIsRefused) {
  TempDir dir;
  const std::string run = run_dir_with_harness(dir, ::getpid());
  fs::remove(run + "/harness.json");
  expect_every_command_refused(run, "no harness record");
}

}  // namespace
}  // namespace ncclfi::e2e
