// The api kinds that stand for the node's own fault sites (NVLink and PCIe), against the NCCL and CUDA
// doubles: each fires at the asked place and hands NCCL what the real fault would change. The doubles only
// record what NCCL would read; what NCCL on a GPU makes of it is checked by the GPU scenarios.
#include <fstream>
#include <sstream>

#include "preload_fixture.h"

namespace ncclfi::test {
namespace {

bool contains(const std::vector<std::string>& lines, const std::string& line) {
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

TEST_F(PreloadTest, NvlinkDownDisablesP2pBeforeNcclCreatesTheComm) {
  write_plan(json::array({fault("nvl", "nvlink_down", json::object(), {{"ranks", {1}}}, json::object())}));
  auto r1 = run({"ops", "allreduce", "1", "--rank", "1"});
  ASSERT_EQ(r1.exit_code, 0) << r1.out << r1.err;
  EXPECT_TRUE(contains(calls(), "env NCCL_P2P_DISABLE=1")) << "NCCL did not see the change at its init";
  auto inj = events("inject");
  ASSERT_EQ(inj.size(), 1u);
  EXPECT_EQ(inj[0]["op"], "init");
  EXPECT_EQ(inj[0]["env"], "NCCL_P2P_DISABLE=1");

  std::filesystem::remove(path("events.jsonl"));
  std::filesystem::remove(path("calls.log"));
  auto r0 = run({"ops", "allreduce", "1", "--rank", "0"});
  ASSERT_EQ(r0.exit_code, 0);
  EXPECT_FALSE(contains(calls(), "env NCCL_P2P_DISABLE=1")) << "an untargeted rank kept its NVLink";
  EXPECT_TRUE(events("inject").empty());
}

TEST_F(PreloadTest, PcieDowngradeHandsNcclItsOwnTopologyWithTheGpuLinkLowered) {
  write_plan(json::array(
      {fault("pcie", "pcie_downgrade", {{"width", 4}, {"gen", 4}}, {{"ranks", {0}}}, json::object())}));
  auto r = run({"ops", "allreduce", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // A probe communicator on the same device dumps what NCCL detects; the job's own comm then reads the copy.
  const auto inits = calls_named("ncclCommInitAll");
  ASSERT_EQ(inits.size(), 1u);
  const std::string lowered = path("topology-rank0-downgraded.xml");
  EXPECT_TRUE(contains(calls(), "env NCCL_TOPO_FILE=" + lowered));
  std::ifstream in(lowered);
  std::stringstream text;
  text << in.rdbuf();
  const std::string xml = text.str();
  EXPECT_NE(
      xml.find(R"(<pci busid="0000:1a:00.0" class="0x030200" link_speed="16.0 GT/s PCIe" link_width="4">)"),
      std::string::npos)
      << xml;
  EXPECT_NE(
      xml.find(R"(<pci busid="0000:17:00.0" class="0x060400" link_speed="32.0 GT/s PCIe" link_width="16">)"),
      std::string::npos)
      << "the switch above the GPU must keep its link: " << xml;
  auto inj = events("inject");
  ASSERT_EQ(inj.size(), 1u);
  EXPECT_EQ(inj[0]["pcie_width"], 4);
  EXPECT_EQ(inj[0]["pcie_speed"], "16.0 GT/s PCIe");
  EXPECT_EQ(inj[0]["gpu"], "0000:1A:00.0");
  EXPECT_FALSE(inj[0].contains("effect")) << inj[0];
  EXPECT_EQ(calls_named("ncclAllReduce").size(), 2u);
}

TEST_F(PreloadTest, NvlinkErrorWarnsAsNcclAndReportsUnhandledCudaError) {
  write_plan(json::array({fault("nvl", "nvlink_error", json::object(),
                                {{"ranks", {0}}, {"ops", {"allreduce"}}}, {{"after_calls", 2}})}));
  auto r = run({"ops", "allreduce", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto codes = async_codes(r.out);
  EXPECT_EQ(codes[1], 0);
  EXPECT_EQ(codes[2], 1) << "ncclUnhandledCudaError from the faulted call on";
  EXPECT_EQ(codes[3], 1);
  EXPECT_NE(
      r.err.find("NCCL WARN Cuda failure 220 'uncorrectable NVLink error detected during the execution'"),
      std::string::npos)
      << r.err;
  EXPECT_EQ(calls_named("ncclAllReduce").size(), 3u) << "the op itself goes on";
}

// The CUDA double runs host functions at once, so the hold is seen in the call's own time.
TEST_F(PreloadTest, BandwidthCapHoldsEachOpForItsBusBytesAtTheCap) {
  // all_reduce of 262144 floats on 2 ranks: 1 MiB buffer, bus bytes 2(n-1)/n of it = 1 MiB: 105 ms at 0.01
  // GB/s.
  write_plan(
      json::array({fault("cap", "bandwidth_cap", {{"gb_per_s", 0.01}},
                         {{"ranks", {0}}, {"ops", {"allreduce"}}}, {{"after_calls", 2}, {"count", 0}})}));
  auto r = run({"ops", "allreduce", "3", "--count", "262144"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto o = outcomes(r.out);
  EXPECT_LT(o[1].ms, 50.0) << "before the trigger";
  for (int i : {2, 3}) {
    EXPECT_GE(o[i].ms, 104.0) << "call " << i;
    EXPECT_LT(o[i].ms, 400.0) << "call " << i;
  }
  auto inj = events("inject");
  ASSERT_EQ(inj.size(), 2u);
  EXPECT_NEAR(inj[0]["hold_ms_at_most"].get<double>(), 104.8576, 0.01);
  EXPECT_EQ(inj[0]["gb_per_s"], 0.01);
}

// NCCLFI_TIME_OPS with no plan: one op_time event per op, from the call to the op's completion on its stream
// (the CUDA double runs host functions at once, so that is the call's own time here).
TEST_F(PreloadTest, OpTimingWritesEachOpsTimeFromCallToCompletion) {
  auto r = run({"ops", "allreduce", "3"}, {{"NCCLFI_TIME_OPS", "1"}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto timed = events("op_time");
  ASSERT_EQ(timed.size(), 3u);
  for (size_t i = 0; i < timed.size(); ++i) {
    EXPECT_EQ(timed[i]["op"], "allreduce");
    EXPECT_EQ(timed[i]["seq"], i + 1);
    EXPECT_GE(timed[i]["dur_us"].get<double>(), 0.0);
    EXPECT_FALSE(timed[i].contains("in_group"));
  }
  EXPECT_EQ(calls_named("cuLaunchHostFunc").size(), 3u);

  // In a group the note goes on the stream after the outermost ncclGroupEnd has launched the op.
  std::filesystem::remove(path("events.jsonl"));
  std::filesystem::remove(path("calls.log"));
  auto g = run({"ops", "allreduce", "2", "--group"}, {{"NCCLFI_TIME_OPS", "1"}});
  ASSERT_EQ(g.exit_code, 0) << g.out << g.err;
  auto grouped = events("op_time");
  ASSERT_EQ(grouped.size(), 2u);
  EXPECT_EQ(grouped[0]["in_group"], true);
  const auto log = calls();
  const auto end = std::find_if(log.begin(), log.end(),
                                [](const std::string& l) { return l.rfind("ncclGroupEnd", 0) == 0; });
  const auto note = std::find_if(log.begin(), log.end(),
                                 [](const std::string& l) { return l.rfind("cuLaunchHostFunc", 0) == 0; });
  ASSERT_NE(end, log.end());
  EXPECT_LT(end - log.begin(), note - log.begin()) << "the note came before the group launched the op";
}

TEST_F(PreloadTest, WithoutTimeOpsNothingIsTimed) {
  auto r = run({"ops", "allreduce", "2"}, {{"NCCLFI_TRACE_OPS", "1"}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(events("op_time").empty());
  EXPECT_TRUE(calls_named("cuLaunchHostFunc").empty());
}

}  // namespace
}  // namespace ncclfi::test
