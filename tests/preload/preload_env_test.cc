// What NCCL read (interpose/nccl/env_reads.h): the preload's getenv records the NCCL_* lookups the
// libnccl stand-in makes through getenv, as NCCL does (it reads NCCL_P2P_DISABLE, NCCL_TOPO_FILE and
// NCCL_TOPO_DUMP_FILE when a communicator is made), and the harness's notes (harness/model/nccl_env.h)
// name the variables it was given that it never read.
#include <regex>

#include "nccl_env.h"
#include "preload_fixture.h"

namespace ncclfi::test {
namespace {

// Every nccl_env_read event's `read`, merged.
json merged_reads(const std::vector<json>& events) {
  json read = json::object();
  for (const auto& e : events) read.update(e.at("read"));
  return read;
}

TEST_F(PreloadTest, RecordsWhatTheStandInNcclReadAndTheNotesNameTheRest) {
  const std::map<std::string, std::string> given = {
      {"NCCL_TIMEOUT", "5"}, {"NCCL_IB_TIMOUT", "22"}, {"NCCL_P2P_DISABLE", "1"}};
  std::map<std::string, std::string> env = given;
  env["NCCLFI_RECORD_NCCL_ENV"] = "1";
  env["NCCLFI_RANK"] = "0";
  auto r = run({"ops", "allreduce", "2", "--rank", "0"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.err, "");
  const auto recorded = events("nccl_env_read");
  ASSERT_FALSE(recorded.empty()) << "no nccl_env_read event";
  const json read = merged_reads(recorded);
  EXPECT_EQ(read.value("NCCL_P2P_DISABLE", json()), "1") << read.dump();
  ASSERT_TRUE(read.contains("NCCL_TOPO_FILE")) << read.dump();
  EXPECT_TRUE(read["NCCL_TOPO_FILE"].is_null()) << "an unset variable NCCL looked up is recorded as null";
  EXPECT_FALSE(read.contains("NCCL_TIMEOUT")) << read.dump();
  EXPECT_FALSE(read.contains("NCCL_IB_TIMOUT")) << read.dump();
  // Every name once over all the events (the first lookup's value).
  size_t names = 0;
  for (const auto& e : recorded) names += e["read"].size();
  EXPECT_EQ(names, read.size());
  const std::string version = recorded[0].value("nccl_version", "");
  EXPECT_TRUE(std::regex_match(version, std::regex(R"(2\.\d+\.\d+)"))) << recorded[0].dump();
  EXPECT_NE(recorded[0].value("nccl_lib", "").find("nccl-double/libnccl.so.2"), std::string::npos)
      << recorded[0].dump();
  EXPECT_EQ(recorded[0]["rank"], 0);

  harness::NcclEnvObserved observed;
  observed.given = given;
  for (const auto& e : recorded) harness::add_nccl_env_read(observed, e);
  const std::vector<std::string> expected = {
      "NCCL_IB_TIMOUT=22: NCCL " + version + " does not read this variable (did you mean NCCL_IB_TIMEOUT?)",
      "NCCL_TIMEOUT=5: NCCL " + version + " does not read this variable (did you mean NCCL_IB_TIMEOUT?)"};
  EXPECT_EQ(harness::nccl_env_notes(observed), expected);
}

TEST_F(PreloadTest, TheProgramsOwnLookupsAreNotNccls) {
  // The driver is not libnccl: its own getenv("NCCL_...") must not count as NCCL's.
  auto r = run({"getenv", "NCCL_TIMEOUT"}, {{"NCCL_TIMEOUT", "5"}, {"NCCLFI_RECORD_NCCL_ENV", "1"}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(has_line(r.out, "getenv NCCL_TIMEOUT=5")) << r.out;
  for (const auto& e : events("nccl_env_read")) EXPECT_FALSE(e["read"].contains("NCCL_TIMEOUT")) << e.dump();
}

TEST_F(PreloadTest, NothingIsRecordedUnlessAsked) {
  auto r = run({"ops", "allreduce", "1", "--rank", "0"}, {{"NCCL_P2P_DISABLE", "1"}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(events("nccl_env_read").empty());
}

TEST_F(PreloadTest, NcclInALocalScopeIsRecordedToo) {
  // PyTorch's pattern: libtorch_cuda (here the fake) is dlopen'ed RTLD_LOCAL and brings its own libnccl.
  std::map<std::string, std::string> env = {{"NCCL_DOUBLE_LOG", path("calls.log")},
                                            {"NCCLFI_EVENTS", path("events.jsonl")},
                                            {"NCCLFI_RECORD_NCCL_ENV", "1"},
                                            {"NCCL_P2P_DISABLE", "1"},
                                            {"LD_PRELOAD", NCCLFI_TEST_PRELOAD}};
  auto r = run_process({NCCLFI_TEST_LOCAL_SCOPE_DRIVER, NCCLFI_TEST_FAKE_TORCH, "1"}, env, 20);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json read = merged_reads(events("nccl_env_read"));
  EXPECT_EQ(read.value("NCCL_P2P_DISABLE", json()), "1") << read.dump();
}

}  // namespace
}  // namespace ncclfi::test
