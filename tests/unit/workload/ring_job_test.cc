// How ncclfi-cpu-ring ends on a failed transfer (ring_job.h): a transfer that fails in an op already past
// its timeout (the process was stopped, and resumed after its peers gave up) reports the timeout, as the
// watchdog thread would have; one that fails in time reports the plugin's error.
#include "ring_job.h"

#include <gtest/gtest.h>

#include "ncclfi/event_log.h"

namespace ncclfi::cpu_ring {
namespace {

// Ends like a rank whose all-reduce seq 7 began `waited_s` ago, with a 2 s watchdog, when its send fails.
void fail_a_send_after(double waited_s) {
  OpState state;
  const EventLog events;
  Options opt;
  opt.timeout_s = 2;
  OpRecorder ops(state, events, opt, 16);
  ops.begin(7);
  state.start_mono_ns.store(Clock::mono_ns() - static_cast<int64_t>(waited_s * 1e9));
  RingLinks links;
  links.rank = 2;
  links.world_size = 4;
  ops.failed(links, {"test(send)", ncclRemoteError});
}

TEST(CpuRingJob, ATransferThatFailsPastTheTimeoutReportsTheLateTimeout) {
  EXPECT_EXIT(fail_a_send_after(5.0), testing::ExitedWithCode(3),
              R"(watchdog: allreduce seq 7 did not complete within 2\.000000 s \(waited 5\.0)");
}

TEST(CpuRingJob, ATransferThatFailsInTimeReportsThePluginError) {
  EXPECT_EXIT(fail_a_send_after(0.5), testing::ExitedWithCode(2),
              R"(net plugin call test\(send\) failed with ncclResult_t 6 \(ncclRemoteError\))");
}

}  // namespace
}  // namespace ncclfi::cpu_ring
