// `gpu_hang` puts a wait on the op's stream ahead of the op and lets the call return: the host goes on
// while the op never starts (for ever, or until ms have passed). On CPU the CUDA driver is a host-memory
// stand-in (double/cuda_double.cc) that records the wait and, from a thread watching the flag,
// "released ... after_ms=N" when the wait would end.
#include "preload_fixture.h"

namespace ncclfi::test {
namespace {

const std::string kWait = "cuStreamWaitValue32 stream=0x5151 value=1";

json on_allreduce() {
  return json{{"ranks", {0}}, {"ops", {"allreduce"}}};
}

// Index of the first log line that starts with `prefix`, or the log's size.
size_t first_line(const std::vector<std::string>& log, const std::string& prefix, size_t from = 0) {
  for (size_t i = from; i < log.size(); ++i) {
    if (log[i].rfind(prefix, 0) == 0) return i;
  }
  return log.size();
}

TEST_F(PreloadTest, GpuHangWaitsOnTheOpsStreamBeforeTheOpAndTheCallReturns) {
  write_plan(json::array({fault("g", "gpu_hang", json::object(), on_allreduce(), {{"after_calls", 2}})}));
  auto r = run({"ops", "allreduce", "3", "--linger-ms", "300"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.err, "");
  const auto o = outcomes(r.out);
  ASSERT_EQ(o.size(), 3u) << "the thread must stay free: " << r.out;
  for (const auto& [i, c] : o) EXPECT_EQ(c.rc, 0) << "call " << i;

  const auto log = calls();
  ASSERT_EQ(calls_named("ncclAllReduce").size(), 3u) << "the op still reaches NCCL";
  ASSERT_EQ(calls_named("cuStreamWaitValue32").size(), 1u);
  const size_t op1 = first_line(log, "ncclAllReduce");
  const size_t wait = first_line(log, "cuStreamWaitValue32");
  const size_t op2 = first_line(log, "ncclAllReduce", op1 + 1);
  EXPECT_EQ(log[wait], kWait);
  EXPECT_LT(op1, wait) << "only the asked call";
  EXPECT_EQ(wait + 1, op2) << "the wait goes on the stream right before the op";
  EXPECT_TRUE(calls_named("released").empty()) << "for ever: nothing releases the stream";

  const auto inj = events("inject");
  ASSERT_EQ(inj.size(), 1u);
  EXPECT_EQ(inj[0]["kind"], "gpu_hang");
  EXPECT_EQ(inj[0]["forever"], true);
  EXPECT_EQ(inj[0]["seq"], 2);
  EXPECT_FALSE(inj[0].contains("effect"));
}

TEST_F(PreloadTest, GpuHangWithMsReleasesTheStreamAfterMs) {
  write_plan(json::array({fault("g", "gpu_hang", {{"ms", 1000}}, on_allreduce(), {{"after_calls", 1}})}));
  auto r = run({"ops", "allreduce", "2", "--linger-ms", "4000"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto o = outcomes(r.out);
  ASSERT_EQ(o.count(1), 1u) << r.out;
  EXPECT_EQ(o.at(1).rc, 0);
  EXPECT_LT(o.at(1).ms, 1000.0) << "the call does not wait for the release";
  const auto released = calls_named("released");
  ASSERT_EQ(released.size(), 1u) << "not released within the 4 s the driver stayed";
  const std::string prefix = "released stream=0x5151 after_ms=";
  ASSERT_EQ(released[0].rfind(prefix, 0), 0u) << released[0];
  EXPECT_GE(std::stod(released[0].substr(prefix.size())), 1000.0);
  const auto inj = events("inject");
  ASSERT_EQ(inj.size(), 1u);
  EXPECT_EQ(inj[0]["gpu_hang_ms"], 1000.0);
  EXPECT_FALSE(inj[0].contains("forever"));
}

// In a group NCCL launches at the outermost ncclGroupEnd, on a non-blocking comm possibly later still:
// the wait enqueued at the op call is ahead of the launch either way.
TEST_F(PreloadTest, GpuHangInAGroupWaitsBeforeTheGroupLaunches) {
  write_plan(json::array({fault("g", "gpu_hang", json::object(), on_allreduce(), json::object())}));
  auto r = run({"ops", "allreduce", "1", "--group"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto o = outcomes(r.out);
  ASSERT_EQ(o.count(1), 1u) << r.out;
  EXPECT_EQ(o.at(1).rc, 0);
  EXPECT_EQ(o.at(1).end, 0);
  const auto log = calls();
  const size_t start = first_line(log, "ncclGroupStart");
  const size_t wait = first_line(log, "cuStreamWaitValue32");
  const size_t end = first_line(log, "ncclGroupEnd");
  EXPECT_LT(start, wait);
  EXPECT_LT(wait, first_line(log, "ncclAllReduce"));
  EXPECT_LT(wait, end);
  ASSERT_LT(end, log.size());
  const auto inj = events("inject");
  ASSERT_EQ(inj.size(), 1u);
  EXPECT_EQ(inj[0]["in_group"], true);
}

TEST_F(PreloadTest, GpuHangOnANonBlockingCommWaitsBeforeTheOpAndPassesInProgress) {
  write_plan(json::array({fault("g", "gpu_hang", json::object(), on_allreduce(), json::object())}));
  auto r = run({"ops", "allreduce", "1", "--nonblocking"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto o = outcomes(r.out);
  ASSERT_EQ(o.count(1), 1u) << r.out;
  EXPECT_EQ(o.at(1).rc, 7) << "ncclInProgress passes through";
  const auto log = calls();
  EXPECT_LT(first_line(log, "cuStreamWaitValue32"), first_line(log, "ncclAllReduce"));
  ASSERT_EQ(events("inject").size(), 1u);
}

// A driver without the stream-wait functions still serves corrupt; gpu_hang fires but says it did
// nothing, which the judge does not count as an injection.
TEST_F(PreloadTest, GpuHangWithoutStreamWaitInTheDriverHasNoEffectAndCorruptStillWorks) {
  write_plan(json::array(
      {fault("g", "gpu_hang", json::object(), on_allreduce(), {{"after_calls", 1}, {"count", 1}}),
       // Call 1 is the gpu_hang's; a call one fault took does not count for the next: call 2 is c's first.
       fault("c", "corrupt", {{"mode", "zero"}}, on_allreduce(), {{"after_calls", 1}, {"count", 1}})}));
  auto r =
      run({"ops", "allreduce", "2"}, {{"NCCLFI_CUDA_DRIVER_LIB", NCCLFI_TEST_CUDA_DOUBLE_NO_STREAM_WAIT}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const auto& [i, c] : outcomes(r.out)) EXPECT_EQ(c.rc, 0) << "call " << i;
  EXPECT_EQ(calls_named("ncclAllReduce").size(), 2u);
  EXPECT_TRUE(calls_named("cuStreamWaitValue32").empty());
  EXPECT_EQ(calls_named("cuMemcpy2DAsync up stream=0x5151 width=4 height=1").size(), 1u);
  const auto inj = events("inject");
  ASSERT_EQ(inj.size(), 2u);
  EXPECT_EQ(inj[0]["fault_id"], "g");
  const std::string effect = inj[0].value("effect", "");
  EXPECT_EQ(effect.rfind("none: ", 0), 0u) << effect;
  EXPECT_NE(effect.find("cuStreamWaitValue32_v2"), std::string::npos) << effect;
  EXPECT_FALSE(inj[0].contains("forever"));
  EXPECT_EQ(inj[1]["fault_id"], "c");
  EXPECT_FALSE(inj[1].contains("effect"));
}

// group end and comm creation have no stream to wait on: a plan that aims gpu_hang there is invalid,
// and the preload refuses it whole rather than run part of it.
TEST_F(PreloadTest, GpuHangOnGroupEndOrInitIsRejectedByThePlan) {
  for (const char* op : {"group_end", "init"}) {
    write_plan(json::array({fault("g", "gpu_hang", json::object(), {{"ops", {op}}}, json::object())}));
    auto r = run({"ops", "allreduce", "1", "--group"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.err.find("preload: ignoring the fault plan:"), std::string::npos) << op << ": " << r.err;
    EXPECT_NE(r.err.find("ops that api gpu_hang can hit"), std::string::npos) << op << ": " << r.err;
    EXPECT_TRUE(calls_named("cuStreamWaitValue32").empty()) << op;
    EXPECT_TRUE(events("inject").empty()) << op;
    std::filesystem::remove(path("calls.log"));
  }
}

}  // namespace
}  // namespace ncclfi::test
