// Jobs that lie about injections: a rank's own `inject` line in the events file, or a rank that cuts the
// file. Ground truth comes only from the injection channel (docs/faults.md, How injections are
// recorded), so neither may let a verdict pass.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cli_process.h"

namespace ncclfi::e2e {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

std::string latest_run(const std::string& runs, const std::string& name) {
  return fs::canonical(fs::path(runs) / name / "latest").string();
}

// A shell line that appends a made-up `inject` event of `source` for fault f1 to the rank's events file.
std::string forge_inject_line(const std::string& source, const std::string& layer, const std::string& kind) {
  return "printf '{\"event\":\"inject\",\"ts_ns\":%s,\"mono_ns\":1,\"rank\":0,\"pid\":%s,\"host\":\"h\","
         "\"source\":\"" +
         source + "\",\"fault_id\":\"f1\",\"kind\":\"" + kind + "\",\"layer\":\"" + layer +
         "\",\"record_seq\":1,\"attempt\":0}\\n' \"$(date +%s%N)\" $$ >> \"$NCCLFI_EVENTS\"; ";
}

json verdict_of(const std::string& dir, const json& scenario) {
  const auto r = run_cli({"run", write_scenario(dir, scenario), "--out", dir + "/runs", "-q"}, 60);
  EXPECT_FALSE(r.timed_out) << r.out << r.err;
  const fs::path latest = fs::path(dir) / "runs" / scenario["name"].get<std::string>() / "latest";
  if (!fs::exists(latest)) {
    ADD_FAILURE() << "no run: " << r.out << r.err;
    return json::object();
  }
  return read_json(latest_run(dir + "/runs", scenario["name"]) + "/verdict.json");
}

bool reasons_say(const json& verdict, const std::string& text) {
  return verdict["reasons"].dump().find(text) != std::string::npos;
}

// Before: a net fault that never fired (a shell loads no net shim) passed on the rank's own line.
TEST(RobustInjections, ForgedNetInjectLineNeverPasses) {
  TempDir dir;
  json s = shell_scenario("forged-net", 1, forge_inject_line("net", "net", "drop") + "exit 0",
                          {{"outcome", "clean"}});
  s["faults"] = {{{"id", "f1"}, {"layer", "net"}, {"kind", "drop"}, {"trigger", {{"after_calls", 1}}}}};
  const json verdict = verdict_of(dir.path, s);
  EXPECT_NE(verdict["verdict"], "pass") << verdict.dump();
  EXPECT_TRUE(reasons_say(verdict, "forged injection record")) << verdict["reasons"].dump();
  EXPECT_TRUE(reasons_say(verdict, "no fault was injected")) << verdict["reasons"].dump();
}

// The harness's own faults are no easier to fake: a line that claims to be the harness's proc kill.
TEST(RobustInjections, ForgedHarnessInjectLineNeverPasses) {
  TempDir dir;
  json s = shell_scenario("forged-proc", 1, forge_inject_line("harness", "proc", "kill") + "exit 2",
                          {{"outcome", "detected"}, {"detected_by", {"api_error"}}}, 10);
  s["faults"] = {{{"id", "f1"}, {"layer", "proc"}, {"kind", "kill"}, {"trigger", {{"after_ms", 8000}}}}};
  const json verdict = verdict_of(dir.path, s);
  EXPECT_NE(verdict["verdict"], "pass") << verdict.dump();
  EXPECT_TRUE(reasons_say(verdict, "forged injection record")) << verdict["reasons"].dump();
}

// The harness's real injection passes untouched next to the forged check: its record is authentic.
TEST(RobustInjections, RealHarnessInjectionStillPasses) {
  TempDir dir;
  json s = shell_scenario("real-proc", 2, "exec sleep 2", {{"outcome", "detected"}}, 20);
  s["faults"] = {{{"id", "f1"},
                  {"layer", "proc"},
                  {"kind", "kill"},
                  {"target", {{"ranks", {1}}}},
                  {"trigger", {{"after_ms", 300}}}}};
  s["restart"] = {{"max", 0}};
  const json verdict = verdict_of(dir.path, s);
  EXPECT_FALSE(reasons_say(verdict, "injection channel")) << verdict["reasons"].dump();
  EXPECT_FALSE(reasons_say(verdict, "forged")) << verdict["reasons"].dump();
  bool injected = false;
  for (const auto& c : verdict["judgement"]["checks"])
    injected = injected || (c["field"] == "injection" && c["answer"] == "pass");
  EXPECT_TRUE(injected) << verdict["judgement"]["checks"].dump();
}

// The channel reaches ranks that a launcher starts (its variables travel in the environment, never in
// argv): the catalogue's net error fault under each launcher this host has, its injection authenticated.
TEST(RobustInjections, RealNetInjectionsAuthenticateUnderEachLauncher) {
  for (const std::string launcher : {"local", "mpirun", "hydra"}) {
    const std::string tool = launcher == "mpirun" ? "mpirun" : launcher == "hydra" ? "mpiexec.hydra" : "sh";
    if (run_program({"/bin/sh", "-c", "command -v " + tool}).exit_code != 0) continue;
    TempDir dir;
    json s = read_json(std::string(NCCLFI_SOURCE_DIR) + "/scenarios/cpu/net-error-isend.json");
    s["launcher"] = {{"kind", launcher}};
    const json verdict = verdict_of(dir.path, s);
    EXPECT_EQ(verdict["verdict"], "pass") << launcher << ": " << verdict["reasons"].dump();
    EXPECT_FALSE(reasons_say(verdict, "forged")) << launcher;
  }
}

// Ranks launched through node agents (launcher.nodes) cannot reach the harness's socket: each node's
// agent opens a channel of its own and relays its ranks' authenticated records over its sealed link.
// Here mpirun starts one agent and the ranks on this host (nodes 1); the scenario is skipped without it.
bool have_mpirun() {
  return run_program({"/bin/sh", "-c", "command -v mpirun"}).exit_code == 0;
}

// The judgement's check of `field` as text, "" when it has none.
std::string check_named(const json& verdict, const std::string& field) {
  for (const auto& c : verdict["judgement"]["checks"])
    if (c["field"] == field) return c.dump();
  return "";
}

// Before: the agents relayed no channel, the events file was trusted and the injection check said
// "read from the events file, not authenticated". Now the net shim's record comes through the agent.
TEST(RobustInjections, AnAgentLaunchedRanksRealInjectionIsAuthenticated) {
  if (!have_mpirun()) GTEST_SKIP() << "needs mpirun";
  ::setenv("NCCLFI_AGENT_HOST", "127.0.0.1", 1);
  TempDir dir;
  json s = read_json(std::string(NCCLFI_SOURCE_DIR) + "/scenarios/cpu/net-error-isend.json");
  s["launcher"] = {{"kind", "mpirun"}, {"nodes", 1}};
  const json verdict = verdict_of(dir.path, s);
  ::unsetenv("NCCLFI_AGENT_HOST");
  EXPECT_EQ(verdict["verdict"], "pass") << verdict["reasons"].dump();
  EXPECT_FALSE(reasons_say(verdict, "forged")) << verdict["reasons"].dump();
  const std::string injection = check_named(verdict, "injection");
  EXPECT_NE(injection.find("\"answer\":\"pass\""), std::string::npos) << injection;
  EXPECT_EQ(injection.find("not authenticated"), std::string::npos) << injection;
}

// Before: an agent-launched rank's own `inject` line was trusted and the run passed on it. The scenario
// allows its fault not to fire, so nothing but the forged line stands between it and a pass.
TEST(RobustInjections, AForgedLineOfAnAgentLaunchedRankNeverPasses) {
  if (!have_mpirun()) GTEST_SKIP() << "needs mpirun";
  ::setenv("NCCLFI_AGENT_HOST", "127.0.0.1", 1);
  TempDir dir;
  json s = shell_scenario("forged-under-agents", 1, forge_inject_line("net", "net", "drop") + "exit 0",
                          {{"outcome", "clean"}, {"fault_may_not_fire", true}}, 30);
  s["launcher"] = {{"kind", "mpirun"}, {"nodes", 1}};
  s["faults"] = {{{"id", "f1"}, {"layer", "net"}, {"kind", "drop"}, {"trigger", {{"after_calls", 1}}}}};
  const json verdict = verdict_of(dir.path, s);
  ::unsetenv("NCCLFI_AGENT_HOST");
  EXPECT_EQ(verdict["verdict"], "unknown") << verdict.dump();
  EXPECT_TRUE(reasons_say(verdict, "forged injection record")) << verdict["reasons"].dump();
  EXPECT_TRUE(reasons_say(verdict, "no fault was injected")) << verdict["reasons"].dump();
  EXPECT_NE(verdict["history"]["events"].dump().find("\"event\":\"inject_unverified\""), std::string::npos)
      << "the rank's line is not on the timeline as inject_unverified";
}

// Before: a deadline's teardown SIGKILLed this host's node agent with the job's processes, before the
// agent could remove its spool, and /tmp/ncclfi-<harness id>-<attempt> stayed behind.
TEST(RobustInjections, ADeadlineTeardownLeavesNoAgentSpool) {
  if (!have_mpirun()) GTEST_SKIP() << "needs mpirun";
  ::setenv("NCCLFI_AGENT_HOST", "127.0.0.1", 1);
  TempDir dir;
  json s = read_json(std::string(NCCLFI_SOURCE_DIR) + "/scenarios/cpu/proc-stop-all-hung.json");
  s["launcher"] = {{"kind", "mpirun"}, {"nodes", 1}};
  // mpirun and the agent's handshake can take most of the scenario's 6 s on a busy host (5 s seen), and
  // the freeze must fire before the deadline: give the job room; only the teardown matters here.
  s["deadline_s"] = 20;
  s["expect"].erase("detection_s");
  const json verdict = verdict_of(dir.path, s);
  ::unsetenv("NCCLFI_AGENT_HOST");
  const std::string run = latest_run(dir.path + "/runs", s["name"]);
  EXPECT_EQ(verdict["verdict"], "pass") << verdict["reasons"].dump();  // hung, ended by the deadline
  const std::string id = read_json(run + "/harness.json")["harness_id"].get<std::string>();
  ASSERT_FALSE(id.empty());
  for (const auto& entry : fs::directory_iterator("/tmp")) {
    EXPECT_NE(entry.path().filename().string().rfind("ncclfi-" + id + "-", 0), 0u)
        << entry.path() << " was left behind";
  }
}

// Before: a rank that emptied events.jsonl erased the harness's records and the verdict went on.
TEST(RobustInjections, TruncatedEventsFileMakesTheRunUnknown) {
  TempDir dir;
  const json s = shell_scenario("truncated", 1, "sleep 1; : > \"$NCCLFI_EVENTS\"; sleep 1; exit 0",
                                {{"outcome", "clean"}});
  const json verdict = verdict_of(dir.path, s);
  EXPECT_EQ(verdict["verdict"], "unknown") << verdict.dump();
  EXPECT_TRUE(reasons_say(verdict, "truncated")) << verdict["reasons"].dump();
}

}  // namespace
}  // namespace ncclfi::e2e
