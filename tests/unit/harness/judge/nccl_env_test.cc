// What NCCL read against what the job was given (harness/model/nccl_env.h): NCCL's INFO lines about its
// environment, the nearest real names of a misspelt or invented one, the notes on a verdict (which never
// change it), their place in verdict.json and on the console, and the scenario warning.
#include <gtest/gtest.h>

#include <algorithm>

#include "history_builder.h"
#include "judge.h"
#include "nccl_env.h"
#include "observe.h"
#include "reports.h"
#include "scenario.h"

namespace ncclfi::harness {
namespace {

using Kind = NcclInfoLine::Kind;

// Lines as NCCL 2.28.9 prints them: debug.cc's prefix "%s:%d:%d " (host, pid, tid) and "[%d] NCCL INFO "
// (the CUDA device), then param.cc's INFO(NCCL_ENV, "%s set by environment to %lld.", ...), socket.cc's
// INFO(NCCL_ENV, "NCCL_SOCKET_IFNAME set by environment to %s", ...), param.cc's INFO(NCCL_ALL,
// "Invalid value %s for %s, using default %lld.", ...) and init.cc's VERSION_STRING.
TEST(NcclInfoLines, ParsesNcclsOwnFormats) {
  auto set = parse_nccl_info_line("gpu1:27315:27315 [0] NCCL INFO NCCL_IB_TIMEOUT set by environment to 22.");
  ASSERT_TRUE(set);
  EXPECT_EQ(set->kind, Kind::kSet);
  EXPECT_EQ(set->name, "NCCL_IB_TIMEOUT");
  EXPECT_EQ(set->value, "22") << "the full stop after %lld is not part of the value";

  auto text =
      parse_nccl_info_line("gpu1:27315:27315 [1] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0");
  ASSERT_TRUE(text);
  EXPECT_EQ(text->value, "eth0");
  auto negative =
      parse_nccl_info_line("h:1:1 [0] NCCL INFO NCCL_NCHANNELS_PER_NET_PEER set by environment to -1.\r");
  ASSERT_TRUE(negative);
  EXPECT_EQ(negative->value, "-1");

  auto refused = parse_nccl_info_line(
      "gpu1:27315:27315 [0] NCCL INFO Invalid value 99999999999999999999 for NCCL_IB_TIMEOUT, using default "
      "20.");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->kind, Kind::kRefused);
  EXPECT_EQ(refused->name, "NCCL_IB_TIMEOUT");
  EXPECT_EQ(refused->value, "20");

  auto version = parse_nccl_info_line("gpu1:27315:27315 [0] NCCL INFO NCCL version 2.28.9+cuda12.9");
  ASSERT_TRUE(version);
  EXPECT_EQ(version->kind, Kind::kVersion);
  EXPECT_EQ(version->value, "2.28.9");
}

TEST(NcclInfoLines, OtherLinesAreNotAboutTheEnvironment) {
  for (const char* line :
       {"gpu1:1:1 [0] NCCL INFO Channel 00/02 : 0 1",
        "gpu1:1:1 [0] transport.cc:123 NCCL WARN NCCL_IB_TIMEOUT set by environment to 22.",
        "NCCL_IB_TIMEOUT set by environment to 22.", "gpu1:1:1 [0] NCCL INFO",
        "gpu1:1:1 [0] NCCL INFO FOO set by environment to 1",
        "gpu1:1:1 [0] NCCL INFO Invalid value x for NCCL_IB_TIMEOUT, using default y.",
        "gpu1:1:1 [0] NCCL INFO NCCL version "}) {
    EXPECT_FALSE(parse_nccl_info_line(line)) << line;
  }
}

TEST(NcclNames, TheKnownTableIsSortedWithoutRepeats) {
  const auto& known = known_nccl_variables();
  EXPECT_GT(known.size(), 150u);
  EXPECT_TRUE(std::is_sorted(known.begin(), known.end()));
  EXPECT_EQ(std::adjacent_find(known.begin(), known.end()), known.end());
  for (const char* name : {"NCCL_IB_TIMEOUT", "NCCL_P2P_LEVEL", "NCCL_SOCKET_IFNAME", "NCCL_DEBUG"})
    EXPECT_TRUE(std::binary_search(known.begin(), known.end(), name)) << name;
  EXPECT_FALSE(std::binary_search(known.begin(), known.end(), "NCCL_TIMEOUT"));
}

TEST(NcclNames, SuggestsTheNearestRealNames) {
  EXPECT_EQ(nearest_nccl_names("NCCL_TIMEOUT"), std::vector<std::string>{"NCCL_IB_TIMEOUT"});
  EXPECT_EQ(nearest_nccl_names("NCCL_IB_TIMOUT"), std::vector<std::string>{"NCCL_IB_TIMEOUT"});
  EXPECT_EQ(nearest_nccl_names("NCCL_SOCKET_IFNAM"), std::vector<std::string>{"NCCL_SOCKET_IFNAME"});
  EXPECT_TRUE(nearest_nccl_names("NCCL_COMPLETELY_UNRELATED_THING").empty());
  // What NCCL read in the run counts too (a plugin's variable is in no table).
  EXPECT_EQ(nearest_nccl_names("NCCL_FOO_BAZ", {"NCCL_FOO_BAR"}), std::vector<std::string>{"NCCL_FOO_BAR"});
}

TEST(NcclEnvNotes, NameWhatNcclDidNotReadOrTookOtherwise) {
  NcclEnvObserved o;
  o.given = given_nccl_env({{"NCCL_TIMEOUT", "1"}, {"PATH", "/bin"}, {"NCCL_DEBUG", "INFO"}},
                           {{"NCCL_TIMEOUT", "5"},
                            {"NCCL_IB_TIMOUT", "22"},
                            {"NCCL_IB_TIMEOUT", "22"},
                            {"NCCL_P2P_DISABLE", "1"},
                            {"NCCL_BUFFSIZE", "4M"},
                            {"NCCL_NTHREADS", "99999999999999999999"},
                            {"NCCL_SOCKET_IFNAME", "eth0"}});
  EXPECT_EQ(o.given.count("PATH"), 0u);
  EXPECT_EQ(given_nccl_env({{"NCCL_HOME", "/opt/nccl"}}, {}).count("NCCL_HOME"), 0u) << "a path for builds";
  EXPECT_EQ(given_nccl_env({}, {{"NCCL_HOME", "/opt/nccl"}}).count("NCCL_HOME"), 1u)
      << "the scenario meant it";
  EXPECT_EQ(given_nccl_env({{"NCCL_VERSION", "2.28.3-1"}}, {}).count("NCCL_VERSION"), 0u)
      << "a CUDA container image's label of its NCCL package";
  EXPECT_EQ(o.given.at("NCCL_TIMEOUT"), "5") << "the scenario's env wins over the inherited one";
  add_nccl_env_read(o, {{"nccl_version", "2.28.9"},
                        {"read",
                         {{"NCCL_DEBUG", "INFO"},
                          {"NCCL_P2P_DISABLE", "1"},
                          {"NCCL_BUFFSIZE", "4M"},
                          {"NCCL_NTHREADS", "99999999999999999999"},
                          {"NCCL_SOCKET_IFNAME", nullptr}}}});
  observe_nccl_info_line(o, "h:1:1 [0] NCCL INFO NCCL_BUFFSIZE set by environment to 4.");
  observe_nccl_info_line(
      o, "h:1:1 [0] NCCL INFO Invalid value 99999999999999999999 for NCCL_NTHREADS, using default 512.");
  EXPECT_EQ(
      nccl_env_notes(o),
      (std::vector<std::string>{
          "NCCL_BUFFSIZE=4M: NCCL 2.28.9 took it as 4",
          "NCCL_IB_TIMEOUT=22: NCCL 2.28.9 did not read this variable in this run",
          "NCCL_IB_TIMOUT=22: NCCL 2.28.9 does not read this variable (did you mean NCCL_IB_TIMEOUT?)",
          "NCCL_NTHREADS=99999999999999999999: NCCL 2.28.9 refused this value and used its default, 512",
          "NCCL_SOCKET_IFNAME=eth0: NCCL 2.28.9 found it unset: the program, its launcher or an nccl.conf "
          "changed it after the launch",
          "NCCL_TIMEOUT=5: NCCL 2.28.9 does not read this variable (did you mean NCCL_IB_TIMEOUT?)"}));
}

TEST(NcclEnvNotes, WithoutARecordOnlyNamesNoNcclHas) {
  NcclEnvObserved o;
  o.given = {{"NCCL_TIMEOUT", "5"}, {"NCCL_IB_TIMEOUT", "22"}};
  EXPECT_EQ(nccl_env_notes(o), std::vector<std::string>{"NCCL_TIMEOUT=5: NCCL 2.28.9 has no variable of this "
                                                        "name (did you mean NCCL_IB_TIMEOUT?)"});
  o.given = {{"NCCL_IB_TIMEOUT", "22"}};
  EXPECT_TRUE(nccl_env_notes(o).empty());
  // A malformed record is passed over, not believed.
  add_nccl_env_read(o, {{"read", "NCCL_IB_TIMEOUT"}});
  EXPECT_FALSE(o.recorded);
}

TEST(NcclEnvNotes, AreOnTheVerdictWithoutChangingIt) {
  History h = testing::make_history(2);
  testing::all_done(h, 5, true);
  testing::all_exit(h, 6, 0);
  History without = h;
  h.nccl_env.given = {{"NCCL_TIMEOUT", "5"}};
  ASSERT_TRUE(observe_event_line(R"({"ts_ns":1,"rank":0,"source":"preload","event":"nccl_env_read",)"
                                 R"("nccl_version":"2.28.9","read":{"NCCL_DEBUG":null}})",
                                 h));
  const nlohmann::json expect = {{"outcome", "clean"}};
  const Judgement j = judge(h, expect);
  const Judgement plain = judge(without, expect);
  EXPECT_EQ(j.verdict, plain.verdict);
  EXPECT_EQ(j.reasons, plain.reasons);
  EXPECT_TRUE(plain.notes.empty());
  const std::vector<std::string> notes = {
      "NCCL_TIMEOUT=5: NCCL 2.28.9 does not read this variable (did you mean NCCL_IB_TIMEOUT?)"};
  EXPECT_EQ(j.notes, notes);
  EXPECT_EQ(judgement_from_json(to_json(j)).notes, notes);

  RunRecord r;
  r.scenario = "quiet";
  r.judgement = j;
  r.history = h;
  EXPECT_EQ(verdict_json(r)["notes"], nlohmann::json(notes));
  const std::string console = format_notes({r});
  EXPECT_NE(console.find("notes:\nquiet\n  " + notes[0]), std::string::npos) << console;
}

TEST(NcclEnvNotes, AScenarioSettingANameNoNcclHasIsWarned) {
  const cli::Scenario s = cli::scenario_from_text(
      R"({"name": "typo", "summary": "a typo", "workload": {"builtin": "cpu-ring", "ranks": 2},
      "launcher": {"kind": "local"}, "env": {"NCCL_IB_TIMOUT": "22", "NCCL_IB_TIMEOUT": "22"},
      "expect": {"outcome": "clean"}})",
      "typo.json");
  EXPECT_EQ(s.warnings,
            std::vector<std::string>{"typo.json: /env: NCCL_IB_TIMOUT=22: NCCL 2.28.9 has no variable "
                                     "of this name (did you mean NCCL_IB_TIMEOUT?)"});
}

}  // namespace
}  // namespace ncclfi::harness
