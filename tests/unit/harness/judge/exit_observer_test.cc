#include <gtest/gtest.h>

#include "history_builder.h"
#include "observe.h"

namespace ncclfi::harness {
namespace {
using namespace testing;

TEST(ExitCodes, ContractCodesMapToMechanisms) {
  EXPECT_EQ(mechanism_for_exit_code(2), "api_error");
  EXPECT_EQ(mechanism_for_exit_code(3), "workload_watchdog");
  EXPECT_EQ(mechanism_for_exit_code(4), "verification");
  EXPECT_EQ(mechanism_for_exit_code(5), "async_error");
  EXPECT_EQ(mechanism_for_exit_code(6), "bootstrap");
  EXPECT_EQ(mechanism_for_exit_code(7), "nan_check");
  EXPECT_EQ(mechanism_for_exit_code(0), "");
  EXPECT_EQ(mechanism_for_exit_code(1), "");
  EXPECT_EQ(mechanism_for_exit_code(64), "");
}

TEST(ObserveExits, ExitCodesBecomeDetectionsAndEvents) {
  History h = make_history(3);
  add_exit(h, 2.0, 0, 3);
  add_exit(h, 2.1, 1, 5);
  add_exit(h, 2.2, 2, 0);
  observe_exits(h);
  ASSERT_EQ(h.detections.size(), 2u);
  EXPECT_EQ(h.detections[0].mechanism, "workload_watchdog");
  EXPECT_EQ(h.detections[0].rank, 0);
  EXPECT_EQ(h.detections[0].ts_ns, at(2.0));
  EXPECT_EQ(h.detections[1].mechanism, "async_error");
  EXPECT_EQ(h.events.size(), 3u);
  EXPECT_EQ(h.events[0].source, "exit");
  EXPECT_EQ(h.events[0].fields["code"], 3);
}

TEST(ObserveExits, AnExitDetectionKeepsTheHarnessMonotonicTime) {
  History h = make_history(1);
  add_exit(h, 2.0, 0, 3);
  h.exits.back().mono_ns = 987'654'321;
  h.exits.back().host = "node-a";
  observe_exits(h);
  ASSERT_EQ(h.detections.size(), 1u);
  EXPECT_EQ(h.detections[0].mono_ns, 987'654'321);
  EXPECT_EQ(h.detections[0].host, "node-a");
}

TEST(ObserveExits, PeerExitWhenAnotherRankDiedFirst) {
  History h = make_history(3);
  add_exit(h, 1.0, 1, {}, 9);  // rank 1 died (not the harness, no fault of its own recorded)
  add_exit(h, 1.5, 0, 1);      // rank 0 failed after it: peer_exit
  add_exit(h, 1.6, 2, {}, 6);  // SIGABRT after the peer: peer_exit
  observe_exits(h);
  ASSERT_EQ(h.detections.size(), 2u);
  EXPECT_EQ(h.detections[0].mechanism, "peer_exit");
  EXPECT_EQ(h.detections[0].rank, 0);
  EXPECT_EQ(h.detections[1].rank, 2);
}

TEST(ObserveExits, FirstUnexplainedFailureIsNotAPeerExit) {
  History h = make_history(2);
  add_exit(h, 1.0, 0, 1);
  observe_exits(h);
  EXPECT_TRUE(h.detections.empty());
}

TEST(ObserveExits, OwnCrashFaultIsNotADetection) {
  History h = make_history(2);
  add_inject(h, 0.9, 1, "crash");
  add_exit(h, 1.0, 1, {}, 9);
  add_exit(h, 2.0, 0, 1);
  observe_exits(h);
  ASSERT_EQ(h.detections.size(), 1u);
  EXPECT_EQ(h.detections[0].mechanism, "peer_exit");
  EXPECT_EQ(h.detections[0].rank, 0);
}

TEST(ObserveExits, DeadlineKillsGiveOneHarnessDeadline) {
  History h = make_history(2);
  h.deadline_hit = true;
  add_exit(h, 30.0, 0, {}, 15, true);
  add_exit(h, 30.1, 1, {}, 9, true);
  observe_exits(h);
  ASSERT_EQ(h.detections.size(), 1u);
  EXPECT_EQ(h.detections[0].mechanism, "harness_deadline");
  EXPECT_EQ(h.detections[0].ts_ns, at(30.0));
}

TEST(ObserveExits, HarnessKillWithoutDeadlineIsNotADetection) {
  History h = make_history(2);
  add_exit(h, 3.0, 1, {}, 9, true);  // a proc kill fault applied by the harness
  observe_exits(h);
  EXPECT_TRUE(h.detections.empty());
}

TEST(ObserveExits, SecondCallAddsNothing) {
  History h = make_history(1);
  add_exit(h, 1.0, 0, 2);
  observe_exits(h);
  observe_exits(h);
  EXPECT_EQ(h.detections.size(), 1u);
  EXPECT_EQ(h.events.size(), 1u);
}

}  // namespace
}  // namespace ncclfi::harness
