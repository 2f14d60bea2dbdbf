// Each api fault fires at exactly the asked call on the asked rank and has its promised effect.
#include <csignal>
#include <cstring>

#include "ncclfi/fault_action.h"
#include "preload_fixture.h"

namespace ncclfi::test {
namespace {

json on_allreduce(int rank) {
  return json{{"ranks", {rank}}, {"ops", {"allreduce"}}};
}

TEST_F(PreloadTest, ErrorFiresAtTheAskedCallOnTheAskedRankOnly) {
  write_plan(json::array(
      {fault("err", "error", {{"code", "ncclRemoteError"}}, on_allreduce(1), {{"after_calls", 3}})}));
  auto r1 = run({"ops", "allreduce", "5", "--rank", "1"});
  ASSERT_EQ(r1.exit_code, 0) << r1.out << r1.err;
  auto o = outcomes(r1.out);
  ASSERT_EQ(o.size(), 5u);
  for (int i = 1; i <= 5; ++i) EXPECT_EQ(o[i].rc, i == 3 ? 6 : 0) << "call " << i;
  EXPECT_EQ(calls_named("ncclAllReduce").size(), 4u) << "the failed call must not reach NCCL";
  auto inj = events("inject");
  ASSERT_EQ(inj.size(), 1u);
  EXPECT_EQ(inj[0]["fault_id"], "err");
  EXPECT_EQ(inj[0]["rank"], 1);
  EXPECT_EQ(inj[0]["seq"], 3);
  EXPECT_EQ(inj[0]["comm"], 0);
  EXPECT_EQ(inj[0]["bytes"], 64 * 4);
  EXPECT_EQ(inj[0]["code"], 6);

  std::filesystem::remove(path("events.jsonl"));
  std::filesystem::remove(path("calls.log"));
  auto r0 = run({"ops", "allreduce", "5", "--rank", "0"});
  ASSERT_EQ(r0.exit_code, 0);
  for (auto& [i, c] : outcomes(r0.out)) EXPECT_EQ(c.rc, 0) << "rank 0 call " << i;
  EXPECT_EQ(calls_named("ncclAllReduce").size(), 5u);
  EXPECT_TRUE(events("inject").empty());
}

TEST_F(PreloadTest, DelayHoldsTheAskedCallForTheAskedTime) {
  write_plan(json::array({fault("slow", "delay", {{"ms", 150}}, on_allreduce(0), {{"after_calls", 2}})}));
  auto r = run({"ops", "allreduce", "4"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto o = outcomes(r.out);
  EXPECT_GE(o[2].ms, 150.0);
  EXPECT_LT(o[2].ms, 200.0);
  for (int i : {1, 3, 4}) EXPECT_LT(o[i].ms, 50.0) << "call " << i;
  EXPECT_EQ(calls_named("ncclAllReduce").size(), 4u);
}

// Same seed, same bits: each firing's delay is the seeded draw every layer makes (Delay::draw: the fault's
// seed, its id, the firing), the one the shim's and the verbs wrapper's tests check theirs against.
TEST_F(PreloadTest, DelayJitterIsTheSeededDrawEveryLayerMakes) {
  write_plan(
      json::array({fault("jit", "delay", {{"ms", 1}, {"jitter_ms", 30}}, on_allreduce(0), {{"count", 3}})}));
  auto r = run({"ops", "allreduce", "4"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto inj = events("inject");
  ASSERT_EQ(inj.size(), 3u);
  for (const json& e : inj) {
    const auto firing = e["firing"].get<uint64_t>();
    EXPECT_DOUBLE_EQ(e["delay_ms"].get<double>(), (Delay{1, 30}).draw(7, "jit", firing)) << firing;
  }
}

TEST_F(PreloadTest, HangWithMsBlocksThenForwards) {
  write_plan(json::array({fault("h", "hang", {{"ms", 300}}, on_allreduce(0), {{"after_calls", 2}})}));
  auto r = run({"ops", "allreduce", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto o = outcomes(r.out);
  EXPECT_GE(o[2].ms, 300.0);
  EXPECT_EQ(o[2].rc, 0);
  EXPECT_EQ(calls_named("ncclAllReduce").size(), 3u);
}

TEST_F(PreloadTest, HangForeverIsObservedAsAHang) {
  write_plan(json::array({fault("h", "hang", json::object(), on_allreduce(0), {{"after_calls", 2}})}));
  auto r = run({"ops", "allreduce", "3"}, {}, true, /*timeout_s=*/1.5);
  EXPECT_TRUE(r.timed_out) << r.out;
  EXPECT_TRUE(has_line(r.out, "call 2 allreduce start")) << r.out;
  EXPECT_EQ(outcomes(r.out).count(2), 0u) << "call 2 returned: " << r.out;
  EXPECT_EQ(calls_named("ncclAllReduce").size(), 1u);
  auto inj = events("inject");
  ASSERT_EQ(inj.size(), 1u);
  EXPECT_EQ(inj[0]["forever"], true);
}

// The thread that aborts a comm (PyTorch's watchdog on a timeout) stuck in ncclCommAbort: ops are untouched,
// the abort never returns and never reaches NCCL.
TEST_F(PreloadTest, HangAtAbortBlocksTheTeardownOnly) {
  write_plan(json::array(
      {fault("h", "hang", json::object(), {{"ranks", {0}}, {"ops", {"abort"}}}, json::object())}));
  auto r = run({"ops", "allreduce", "3", "--abort"}, {}, true, /*timeout_s=*/1.5);
  EXPECT_TRUE(r.timed_out) << r.out;
  for (int i = 1; i <= 3; ++i) EXPECT_EQ(outcomes(r.out).count(i), 1u) << "call " << i << ": " << r.out;
  EXPECT_TRUE(has_line(r.out, "abort start")) << r.out;
  EXPECT_FALSE(has_line(r.out, "done")) << r.out;
  EXPECT_TRUE(calls_named("ncclCommAbort").empty());
  auto inj = events("inject");
  ASSERT_EQ(inj.size(), 1u);
  EXPECT_EQ(inj[0]["op"], "abort");
  EXPECT_EQ(inj[0]["forever"], true);
}

TEST_F(PreloadTest, HangAtAbortWithMsLetsTheAbortThrough) {
  write_plan(
      json::array({fault("h", "hang", {{"ms", 200}}, {{"ranks", {0}}, {"ops", {"abort"}}}, json::object())}));
  auto r = run({"ops", "allreduce", "2", "--abort"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(has_line(r.out, "abort rc=0")) << r.out;
  EXPECT_EQ(calls_named("ncclCommAbort").size(), 1u);
  EXPECT_EQ(calls_named("ncclAllReduce").size(), 2u);
}

TEST_F(PreloadTest, SkipReturnsSuccessWithoutReachingNccl) {
  write_plan(
      json::array({fault("s", "skip", json::object(), on_allreduce(0), {{"after_calls", 2}, {"count", 2}})}));
  auto r = run({"ops", "allreduce", "5"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (auto& [i, c] : outcomes(r.out)) EXPECT_EQ(c.rc, 0);
  EXPECT_EQ(calls_named("ncclAllReduce").size(), 3u);  // calls 2 and 3 skipped
  EXPECT_EQ(events("inject").size(), 2u);
}

TEST_F(PreloadTest, AsyncErrorIsReportedByGetAsyncErrorFromThenOn) {
  write_plan(json::array({fault("a", "async_error", {{"code", 6}}, on_allreduce(1), {{"after_calls", 3}})}));
  auto r = run({"ops", "allreduce", "5", "--rank", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto a = async_codes(r.out);
  ASSERT_EQ(a.size(), 5u);
  for (int i = 1; i <= 5; ++i) EXPECT_EQ(a[i], i >= 3 ? 6 : 0) << "poll after call " << i;
  for (auto& [i, c] : outcomes(r.out)) EXPECT_EQ(c.rc, 0);
  EXPECT_EQ(calls_named("ncclAllReduce").size(), 5u) << "the op itself still runs";
}

TEST_F(PreloadTest, CrashKillsWithTheAskedSignal) {
  write_plan(
      json::array({fault("c", "crash", {{"signal", "SIGSEGV"}}, on_allreduce(0), {{"after_calls", 2}})}));
  auto r = run({"ops", "allreduce", "3"});
  EXPECT_EQ(r.term_signal, SIGSEGV) << r.out << r.err;
  EXPECT_TRUE(has_line(r.out, "call 2 allreduce start"));
  EXPECT_EQ(outcomes(r.out).count(2), 0u);
  EXPECT_EQ(events("inject").size(), 1u) << "the injection is recorded before dying";
}

TEST_F(PreloadTest, CrashExitsWithTheAskedCode) {
  write_plan(json::array({fault("c", "crash", {{"exit_code", 42}}, on_allreduce(0), {{"after_calls", 1}})}));
  auto r = run({"ops", "allreduce", "3"});
  EXPECT_EQ(r.exit_code, 42) << r.out << r.err;
  EXPECT_EQ(calls_named("ncclAllReduce").size(), 0u);
}

TEST_F(PreloadTest, InitFailReturnsTheCodeOnTheAskedRank) {
  write_plan(json::array({fault("f", "init_fail", {{"code", 2}}, {{"ranks", {1}}}, json::object())}));
  auto r1 = run({"init", "initrank", "--rank", "1"});
  ASSERT_EQ(r1.exit_code, 0) << r1.out << r1.err;
  EXPECT_NE(r1.out.find("init rc=2 "), std::string::npos) << r1.out;
  EXPECT_NE(r1.out.find("comm=comm#null"), std::string::npos) << r1.out;
  EXPECT_TRUE(calls_named("ncclCommInitRank").empty());
  std::filesystem::remove(path("calls.log"));
  auto r0 = run({"init", "initrankconfig", "--rank", "0"});
  EXPECT_NE(r0.out.find("init rc=0 "), std::string::npos) << r0.out;
  EXPECT_EQ(calls_named("ncclCommInitRankConfig").size(), 1u);
}

TEST_F(PreloadTest, InitFailOnSplitTargetsTheParentsRank) {
  write_plan(json::array(
      {fault("f", "init_fail", {{"code", "ncclSystemError"}}, {{"ranks", {1}}}, {{"after_calls", 2}})}));
  auto r = run({"init", "split", "--rank", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // call 1 = the parent's InitRank, call 2 = the split
  EXPECT_NE(r.out.find("init rc=2 "), std::string::npos) << r.out;
  EXPECT_EQ(calls_named("ncclCommInitRank").size(), 1u);
  EXPECT_TRUE(calls_named("ncclCommSplit").empty());
}

TEST_F(PreloadTest, InitHangForeverNeverReturns) {
  write_plan(json::array({fault("ih", "init_hang", json::object(), {{"ranks", {0}}}, json::object())}));
  auto r = run({"init", "initrank", "--rank", "0"}, {}, true, 1.5);
  EXPECT_TRUE(r.timed_out);
  EXPECT_TRUE(has_line(r.out, "init start")) << r.out;
  EXPECT_EQ(r.out.find("init rc="), std::string::npos) << r.out;
}

TEST_F(PreloadTest, InitHangWithMsReturnsLate) {
  write_plan(json::array({fault("ih", "init_hang", {{"ms", 250}}, {{"ranks", {0}}}, json::object())}));
  auto r = run({"init", "scalable", "--rank", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex(R"(init rc=0 ms=([0-9.]+))"))) << r.out;
  EXPECT_GE(std::stod(m[1]), 250.0);
}

TEST_F(PreloadTest, InitAllTargetsEachDevicesRank) {
  // One process, two GPUs: rank 1 is comms[1]; a fault on rank 1 must hit only its calls.
  write_plan(json::array({fault("e", "error", {{"code", 3}}, on_allreduce(1), {{"after_calls", 2}})}));
  auto r = run({"initall", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(has_line(r.out, "call 1 rank0=0 rank1=0 end=0")) << r.out;
  EXPECT_TRUE(has_line(r.out, "call 2 rank0=0 rank1=3 end=0")) << r.out;
  EXPECT_TRUE(has_line(r.out, "call 3 rank0=0 rank1=0 end=0")) << r.out;
  auto inj = events("inject");
  ASSERT_EQ(inj.size(), 1u);
  EXPECT_EQ(inj[0]["rank"], 1);
  EXPECT_EQ(inj[0]["comm"], 1);
  EXPECT_EQ(inj[0]["in_group"], true);
}

TEST_F(PreloadTest, GroupEndFaultFiresAtTheOutermostEnd) {
  write_plan(
      json::array({fault("g", "error", {{"code", 6}}, {{"ops", {"group_end"}}}, {{"after_calls", 2}})}));
  auto r = run({"ops", "allreduce", "3", "--group"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto o = outcomes(r.out);
  EXPECT_EQ(o[1].end, 0);
  EXPECT_EQ(o[2].end, 6);
  EXPECT_EQ(o[2].rc, 0);
  auto inj = events("inject");
  ASSERT_EQ(inj.size(), 1u);
  EXPECT_EQ(inj[0]["point"], "nccl/group/end");
  EXPECT_EQ(inj[0]["rank"], 0) << "the rank of the group's communicator";
}

TEST_F(PreloadTest, CommTargetSelectsTheCreationIndex) {
  // InitAll makes comm 0 (rank 0) and comm 1 (rank 1); target.comm picks by creation order.
  write_plan(json::array(
      {fault("e", "error", {{"code", 5}}, {{"comm", 0}, {"ops", {"allreduce"}}}, {{"count", 0}})}));
  auto r = run({"initall", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(has_line(r.out, "call 1 rank0=5 rank1=0 end=0")) << r.out;
  EXPECT_TRUE(has_line(r.out, "call 2 rank0=5 rank1=0 end=0")) << r.out;
}

}  // namespace
}  // namespace ncclfi::test
