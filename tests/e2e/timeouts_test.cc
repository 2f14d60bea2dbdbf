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
  const auto findings = m["findings"].dump();
  EXPECT_NE(findings.find("setting no-watchdog never detected dead_rank"), std::string::npos) << findings;
  EXPECT_NE(findings.find("fault gpu_hang under setting watchdog-1s fired in only 0/1 trials"),
            std::string::npos)
      << findings;
  EXPECT_EQ(findings.find("setting watchdog-1s never detected"), std::string::npos) << findings;
  EXPECT_NE(m["recommendation"]["text"].get<std::string>().find("3.0 x the largest healthy step"),
            std::string::npos);
  EXPECT_NE(r.out.find("HUNG 1/1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fault never fired 0/1"), std::string::npos) << r.out;
  EXPECT_NE(read_text(dir.path + "/t.html").find("<table id=\"matrix\">"), std::string::npos);
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
  EXPECT_NE(bad_fault.err.find("--fault meteor: expected stall, gpu_hang, host_hang, dead_rank or net_error"),
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
