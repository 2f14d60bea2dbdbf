// `ncclfi timeouts` end to end on CPU: a two-rank Python job that keeps in step with its peer through
// files (a stand-in for a collective: a rank whose peer is gone waits for ever) and reports its steps
// with ncclfi_events. Its own watchdog (MY_WATCHDOG_S, the setting under test) ends it with exit 3.
// The dead_rank fault is real (the harness SIGKILLs rank 1); gpu_hang needs NCCL, so on this job it
// never fires, and the matrix must say so rather than call the setting good.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "cli_process.h"

namespace ncclfi::e2e {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kJob = R"(import os, sys, time
sys.path.insert(0, sys.argv[1])
import ncclfi_events as nfe
rank, world, run = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), sys.argv[2]
watchdog = float(os.environ.get("MY_WATCHDOG_S", "0"))
nfe.start()
def mark(step):
    with open("%s/step-%d.tmp" % (run, rank), "w") as f: f.write(str(step))
    os.replace("%s/step-%d.tmp" % (run, rank), "%s/step-%d" % (run, rank))
def peer_step():
    try:
        with open("%s/step-%d" % (run, 1 - rank)) as f: return int(f.read() or -1)
    except (OSError, ValueError): return -1
for step in range(30):
    with nfe.step(step):
        time.sleep(0.03)
        mark(step)
        waited = time.monotonic()
        while peer_step() < step:
            if watchdog and time.monotonic() - waited > watchdog:
                print("my watchdog: peer silent for %.1f s at step %d" % (watchdog, step), flush=True)
                nfe.exit(3, "watchdog"); sys.exit(3)
            time.sleep(0.01)
nfe.exit(0)
)";

TEST(Timeouts, MatrixOfARealJobNamesTheSettingThatHangsAndTheFaultThatNeverFired) {
  TempDir dir;
  std::ofstream(dir.path + "/job.py") << kJob;
  const json scenario = {
      {"name", "file-sync-job"},
      {"summary", "two ranks in step through files"},
      {"params", {{"job", dir.path + "/job.py"}}},
      {"workload",
       {{"command",
         {"python3", "{param:job}", std::string(NCCLFI_SOURCE_DIR) + "/workloads/torch", "{run_dir}"}},
        {"ranks", 2}}},
      {"deadline_s", 30},
      {"grace_s", 1},
      {"expect", {{"outcome", "clean"}}}};
  const std::string file = write_scenario(dir.path, scenario);
  const json settings = {{"settings",
                          {{{"name", "watchdog-1s"}, {"env", {{"MY_WATCHDOG_S", "1"}}}, {"timeout_s", 1}},
                           {{"name", "no-watchdog"}, {"summary", "nothing watches the peer"}}}}};
  std::ofstream(dir.path + "/settings.json") << settings.dump();
  const auto r = run_cli({"timeouts",
                          file,
                          "--settings",
                          dir.path + "/settings.json",
                          "--fault",
                          "dead_rank",
                          "--fault",
                          "gpu_hang",
                          "--trials",
                          "1",
                          "--healthy-trials",
                          "2",
                          "--deadline-s",
                          "6",
                          "--out",
                          dir.path + "/runs",
                          "--json",
                          dir.path + "/t.json",
                          "--html",
                          dir.path + "/t.html"},
                         150);
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;  // findings
  const json m = read_json(dir.path + "/t.json");
  EXPECT_EQ(m["healthy"]["trials"], 2);
  EXPECT_EQ(m["healthy"]["clean"], 2) << m["healthy"].dump(2);
  EXPECT_GE(m["healthy"]["steps"], 40);  // up to 30 steps x 2 trials, warm-up steps left out
  EXPECT_LE(m["healthy"]["steps"], 60);
  EXPECT_GT(m["healthy"]["largest_step_s"].get<double>(), 0.02);
  auto cell = [&](const std::string& setting, const std::string& fault) {
    for (const auto& c : m["cells"]) {
      if (c["setting"] == setting && c["fault"] == fault) return c;
    }
    return json();
  };
  const json watched = cell("watchdog-1s", "dead_rank");
  EXPECT_EQ(watched["detected"], 1) << watched.dump(2);
  EXPECT_EQ(watched["mechanisms"], json({"workload_watchdog"}));
  const double detection = watched["median_detection_s"].get<double>();
  EXPECT_GE(detection, 0.9);  // the watchdog's own 1 s, measured from the kill
  EXPECT_LT(detection, 5);
  EXPECT_TRUE(watched["median_gone_s"].is_number()) << watched.dump(2);
  const json unwatched = cell("no-watchdog", "dead_rank");
  EXPECT_EQ(unwatched["hung"], 1) << unwatched.dump(2);
  EXPECT_EQ(unwatched["detected"], 0);
  EXPECT_EQ(cell("watchdog-1s", "gpu_hang")["fired"], 0);
  // A trial whose fault never fired is run twice more before the cell keeps it (a loaded host may end a
  // job before the fault's moment); that is said, never hidden.
  EXPECT_EQ(cell("watchdog-1s", "gpu_hang")["reruns"], 2);
  EXPECT_EQ(cell("watchdog-1s", "dead_rank")["fired"], 1);
  const auto findings = m["findings"].dump();
  EXPECT_NE(findings.find("setting no-watchdog never detected dead_rank"), std::string::npos) << findings;
  EXPECT_NE(findings.find("fault gpu_hang under setting watchdog-1s fired in only 0/1 trials"),
            std::string::npos)
      << findings;
  EXPECT_EQ(findings.find("setting watchdog-1s never detected"), std::string::npos) << findings;
  EXPECT_NE(m["recommendation"]["text"].get<std::string>().find("3.0 x the largest healthy step"),
            std::string::npos);
  EXPECT_NE(r.out.find("HUNG 1/1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fault never fired 0/1 (2 run again: fault never fired)"), std::string::npos) << r.out;
  EXPECT_NE(read_text(dir.path + "/t.html").find("<table id=\"matrix\">"), std::string::npos);
}

// NCCL's own network timeout on the CPU ring (its traffic always goes through the net shim): nic_down
// kills rank 1's NIC in the shim's IB persona, and the ranks fail only once NCCL's IB retry budget,
// 4.096 us x 2^NCCL_IB_TIMEOUT x 8, has passed. Two settings: 2^2 (128 us, under 3 x any healthy 1 MiB
// step of the ring: a finding) and 2^17 (4.29 s, above it), whose detection must come that much later.
TEST(Timeouts, NicDownIsDetectedAfterTheIbRetryBudgetAndATooSmallIbTimeoutIsAFinding) {
  TempDir dir;
  const json scenario = {{"name", "ib-ring"},
                         {"summary", "two ranks of the CPU ring"},
                         {"workload",
                          {{"builtin", "cpu-ring"},
                           {"ranks", 2},
                           {"args", {"--iters", "40", "--bytes", "1M", "--timeout-s", "15", "--check"}}}},
                         {"launcher", {{"kind", "local"}}},
                         // NCCL, and the shim as NCCL's IB transport, write their WARN lines only so.
                         {"env", {{"NCCL_DEBUG", "WARN"}}},
                         {"deadline_s", 20},
                         {"grace_s", 1},
                         {"expect", {{"outcome", "clean"}}}};
  const std::string file = write_scenario(dir.path, scenario);
  const json settings = {{"settings",
                          {{{"name", "ib2"}, {"env", {{"NCCL_IB_TIMEOUT", "2"}}}},
                           {{"name", "ib17"}, {"env", {{"NCCL_IB_TIMEOUT", "17"}}}}}}};
  std::ofstream(dir.path + "/settings.json") << settings.dump();
  const auto r = run_cli({"timeouts", file, "--settings", dir.path + "/settings.json", "--fault", "nic_down",
                          "--trials", "1", "--healthy-trials", "1", "--out", dir.path + "/runs", "--json",
                          dir.path + "/t.json", "--html", dir.path + "/t.html"},
                         120);
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;  // the finding on ib2
  const json m = read_json(dir.path + "/t.json");
  ASSERT_EQ(m["healthy"]["clean"], 1) << m["healthy"].dump(2);
  const json& ib = m["recommendation"]["nccl_ib_timeout"];
  ASSERT_TRUE(ib["min"].is_number()) << m["recommendation"].dump(2);
  // The ring's 1 MiB steps take a millisecond or more: 3 x the longest needs more than 2^2's 128 us, far
  // less than 2^17's 4.29 s.
  EXPECT_GT(ib["min"].get<int>(), 2) << ib.dump();
  EXPECT_LE(ib["min"].get<int>(), 17) << ib.dump();
  auto cell = [&](const std::string& setting) {
    for (const auto& c : m["cells"]) {
      if (c["setting"] == setting) return c;
    }
    return json();
  };
  const json small = cell("ib2"), large = cell("ib17");
  ASSERT_EQ(small["detected"], 1) << small.dump(2);
  ASSERT_EQ(large["detected"], 1) << large.dump(2);
  const double small_s = small["median_detection_s"].get<double>();
  const double large_s = large["median_detection_s"].get<double>();
  EXPECT_LT(small_s, 1.5) << small.dump(2);
  EXPECT_GE(large_s, 4.2) << large.dump(2);  // 2^17 x 8 tries: 4.295 s after the failed post
  EXPECT_LT(large_s, 10) << large.dump(2);
  EXPECT_GT(large_s, small_s + 3);
  // The peers failed as NCCL's IB transport fails: its completion-error line in the trial's output.
  const std::string run_dir = large["trials"][0]["run_dir"].get<std::string>();
  bool completion_line = false;
  for (const auto& entry : fs::recursive_directory_iterator(run_dir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".log")
      completion_line |= read_text(entry.path().string()).find("IBV_WC_RETRY_EXC_ERR") != std::string::npos;
  }
  EXPECT_TRUE(completion_line) << run_dir;
  const std::string findings = m["findings"].dump();
  EXPECT_NE(findings.find("setting ib2 sets NCCL_IB_TIMEOUT=2 with NCCL_IB_RETRY_CNT=7"), std::string::npos)
      << findings;
  EXPECT_EQ(findings.find("setting ib17 sets"), std::string::npos) << findings;
  EXPECT_NE(r.out.find("recommended NCCL_IB_TIMEOUT: at least"), std::string::npos) << r.out;
  EXPECT_NE(read_text(dir.path + "/t.html").find("<th class=\"problem\">ib2<"), std::string::npos);
}

// A net fault cannot strike a job whose traffic does not go through the net shim: the cell is skipped,
// says why, runs nothing and is no finding.
TEST(Timeouts, ANetFaultOnAJobWithoutTheNetShimIsSkippedNotJudged) {
  TempDir dir;
  const json scenario = {{"name", "plain"},
                         {"summary", "no net shim"},
                         {"workload", {{"command", {"true"}}, {"ranks", 1}}},
                         {"deadline_s", 10},
                         {"expect", {{"outcome", "clean"}}}};
  const std::string file = write_scenario(dir.path, scenario);
  std::ofstream(dir.path + "/s.json") << R"({"settings": [{"name": "x", "env": {"NCCL_IB_TIMEOUT": "22"}}]})";
  const auto r =
      run_cli({"timeouts", file, "--settings", dir.path + "/s.json", "--fault", "nic_down", "--fault",
               "silent_peer", "--trials", "1", "--out", dir.path + "/runs", "--json", dir.path + "/t.json"},
              60);
  const json m = read_json(dir.path + "/t.json");
  ASSERT_EQ(m["cells"].size(), 2u) << m.dump(2);
  for (const auto& c : m["cells"]) {
    EXPECT_NE(c["skipped"].get<std::string>().find("does not load the net shim"), std::string::npos) << c;
    EXPECT_TRUE(c["trials"].empty());
  }
  EXPECT_NE(r.out.find("skipped: a net fault"), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find("[2/"), std::string::npos) << r.err;  // only the healthy run ran
}

TEST(Timeouts, BadInputChangesNothingAndNamesTheField) {
  TempDir dir;
  const json scenario = {{"name", "j"},
                         {"summary", "s"},
                         {"workload", {{"command", {"true"}}, {"ranks", 1}}},
                         {"expect", {{"outcome", "clean"}}}};
  const std::string file = write_scenario(dir.path, scenario);
  std::ofstream(dir.path + "/s.json") << R"({"settings": [{"name": "x", "params": {"pg_timeout_s": 5}}]})";
  const auto r = run_cli({"timeouts", file, "--settings", dir.path + "/s.json", "--out", dir.path + "/runs"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("/params: expected a parameter to set (this scenario has none)"), std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir.path + "/runs"));
  const auto bad_fault = run_cli({"timeouts", file, "--fault", "meteor", "--out", dir.path + "/runs"});
  EXPECT_EQ(bad_fault.exit_code, 2);
  EXPECT_NE(bad_fault.err.find("--fault meteor: expected stall, gpu_hang, host_hang, dead_rank, net_error, "
                               "nic_down, silent_peer or connect_silent"),
            std::string::npos)
      << bad_fault.err;
}

// The settings file is read as a scenario is: a FIFO is refused at once (it blocked for ever), and a
// duplicate key is an error that names it, before anything runs.
TEST(Timeouts, ASettingsFifoOrDuplicateKeyIsRefusedAtOnce) {
  TempDir dir;
  const json scenario = {{"name", "j"},
                         {"summary", "s"},
                         {"workload", {{"command", {"true"}}, {"ranks", 1}}},
                         {"expect", {{"outcome", "clean"}}}};
  const std::string file = write_scenario(dir.path, scenario);
  const std::string fifo = dir.path + "/settings.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto r = run_cli({"timeouts", file, "--settings", fifo, "--out", dir.path + "/runs"}, 10);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("settings.fifo: not a regular file (a FIFO)"), std::string::npos) << r.err;
  std::ofstream(dir.path + "/dup.json") << R"({"settings": [], "settings": []})";
  const auto dup =
      run_cli({"timeouts", file, "--settings", dir.path + "/dup.json", "--out", dir.path + "/runs"});
  EXPECT_EQ(dup.exit_code, 2) << dup.out << dup.err;
  EXPECT_NE(dup.err.find("dup.json: not valid JSON"), std::string::npos) << dup.err;
  EXPECT_NE(dup.err.find("/settings"), std::string::npos) << dup.err;
  EXPECT_FALSE(fs::exists(dir.path + "/runs"));
}

}  // namespace
}  // namespace ncclfi::e2e
