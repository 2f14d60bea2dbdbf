// The srun launcher against a real Slurm (label `slurm`): scripts/test starts a one-node cluster with
// scripts/slurm-local; without `srun` or a reachable controller these tests report SKIPPED.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <sstream>
#include <thread>

#include "cli_process.h"

namespace ncclfi::e2e {
namespace {

bool slurm_available() {
  return run_program({"/bin/sh", "-c", "command -v srun >/dev/null && sinfo -h >/dev/null 2>&1"}, 10)
             .exit_code == 0;
}

#define REQUIRE_SLURM() \
  if (!slurm_available()) GTEST_SKIP() << "no Slurm cluster (run eval \"$(scripts/slurm-local start)\")"

TEST(Srun, CatalogueScenariosPass) {
  REQUIRE_SLURM();
  TempDir dir;
  const auto r =
      run_cli({"run", std::string(NCCLFI_SOURCE_DIR) + "/scenarios/slurm", "--out", dir.path, "-q"}, 90);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const char* name : {"srun-net-drop-hang", "srun-kill-rank"}) {
    const auto v = read_json(dir.path + "/" + name + "/latest/verdict.json");
    EXPECT_EQ(v["verdict"], "pass") << name << ": " << v.dump(2);
  }
  // The drop scenario: every task's own watchdog fired, 3 s after the injection (the --timeout-s).
  const auto drop = read_json(dir.path + "/srun-net-drop-hang/latest/verdict.json");
  EXPECT_NEAR(drop["detection_s"].get<double>(), 3.0, 0.5);
  // The kill scenario: the harness found rank 3 among slurmd's tasks and killed that pid.
  const std::string events = read_text(dir.path + "/srun-kill-rank/latest/events.jsonl");
  bool killed_rank3 = false;
  std::istringstream lines(events);
  for (std::string line; std::getline(lines, line);) {
    const auto e = nlohmann::json::parse(line, nullptr, false);
    if (e.is_object() && e.value("event", "") == "inject" && e.value("layer", "") == "proc") {
      killed_rank3 = e.value("rank", -1) == 3 && e.value("pid", 0) > 0;
    }
  }
  EXPECT_TRUE(killed_rank3) << events;
  // srun's --label prefixes are parsed: the launcher log carries lines of ranks 0-2.
  const std::string log = read_text(dir.path + "/srun-kill-rank/latest/attempt-0/launcher.log");
  EXPECT_NE(log.find("0: "), std::string::npos) << log;
}

// Each task records its pid and waits for ever; then ncclfi is signalled mid-run.
void interrupt_srun_job(int sig) {
  TempDir dir;
  nlohmann::json s =
      shell_scenario("srun-forever", 3, "echo $$ > " + dir.path + "/task-$SLURM_PROCID; exec sleep 1000",
                     {{"outcome", "clean"}}, 120);
  s["launcher"] = {{"kind", "srun"}};
  const auto file = write_scenario(dir.path, s);
  const pid_t cli = start_cli({"run", file, "--out", dir.path + "/runs", "-q"}, dir.path + "/cli.out");
  std::vector<pid_t> tasks;
  for (int r = 0; r < 3; ++r) {
    const std::string f = dir.path + "/task-" + std::to_string(r);
    const pid_t task = wait_for_pid_file(f, 20);
    ASSERT_GT(task, 0) << read_text(dir.path + "/cli.out");
    tasks.push_back(task);
  }
  for (pid_t p : tasks) ASSERT_TRUE(process_alive(p));
  kill(cli, sig);
  ASSERT_NE(wait_pid(cli, 30), -1) << "ncclfi did not exit after signal " << sig;
  // The tasks are slurmd's children, not ours: the teardown (or the orphan guard) finds them by the
  // run's NCCLFI_HARNESS_ID.
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  bool any = true;
  while (any && std::chrono::steady_clock::now() < end) {
    any = false;
    for (pid_t p : tasks) any = any || process_alive(p);
    if (any) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_FALSE(any) << "a Slurm task outlived ncclfi after signal " << sig;
  // And the job itself ends: after a SIGKILL the orphan guard scancels it (a SIGKILLed srun leaves its
  // step behind otherwise, and on other nodes its tasks too).
  std::string jobs;
  for (int i = 0; i < 100; ++i) {
    jobs = run_program({"/bin/sh", "-c", "squeue -h -o %j | grep ncclfi-srun-forever- || true"}, 10).out;
    if (jobs.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(jobs, "") << "the Slurm job outlived ncclfi after signal " << sig;
}

TEST(Srun, SigintLeavesNoTask) {
  REQUIRE_SLURM();
  interrupt_srun_job(SIGINT);
}

TEST(Srun, SigkillLeavesNoTask) {
  REQUIRE_SLURM();
  interrupt_srun_job(SIGKILL);
}

}  // namespace
}  // namespace ncclfi::e2e
