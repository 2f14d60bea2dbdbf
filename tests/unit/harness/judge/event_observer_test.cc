#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "history_builder.h"
#include "observe.h"

namespace ncclfi::harness {
namespace {

std::string temp_path(const std::string& name) {
  return (testing::scratch_root() / name).string();
}

void write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::string line(const std::string& event, int rank, const std::string& extra = "") {
  return R"({"ts_ns":1000,"mono_ns":5,"rank":)" + std::to_string(rank) +
         R"(,"pid":42,"host":"h","source":"workload","event":")" + event + "\"" + extra + "}\n";
}

TEST(EventObserver, ReadsEventsAndSplitsCommonFields) {
  const std::string path = temp_path("events1.jsonl");
  write(path, line("start", 0, R"(,"world_size":4)") + line("op", 1, R"(,"seq":3,"bytes":1024,"dur_us":17)"));
  History h;
  auto stats = read_event_log(path, h, 2);
  EXPECT_EQ(stats.events, 2u);
  EXPECT_EQ(stats.bad_lines, 0u);
  EXPECT_FALSE(stats.torn_tail);
  ASSERT_EQ(h.events.size(), 2u);
  EXPECT_EQ(h.events[1].rank, 1);
  EXPECT_EQ(h.events[1].pid, 42);
  EXPECT_EQ(h.events[1].host, "h");
  EXPECT_EQ(h.events[1].source, "workload");
  EXPECT_EQ(h.events[1].event, "op");
  EXPECT_EQ(h.events[1].attempt, 2);
  EXPECT_EQ(h.events[1].fields["dur_us"], 17);
  EXPECT_FALSE(h.events[1].fields.contains("event"));
  EXPECT_TRUE(h.detections.empty());
}

TEST(EventObserver, TornLastLineIsIgnoredAndBadMiddleLineCounted) {
  const std::string path = temp_path("events2.jsonl");
  write(path, line("start", 0) + "{not json}\n" + line("op", 0) + R"({"ts_ns":12,"rank":1,"ev)");
  History h;
  auto stats = read_event_log(path, h);
  EXPECT_EQ(stats.events, 2u);
  EXPECT_EQ(stats.bad_lines, 1u);
  EXPECT_TRUE(stats.torn_tail);
}

TEST(EventObserver, MissingFileReadsAsEmpty) {
  History h;
  auto stats = read_event_log(temp_path("nope.jsonl"), h);
  EXPECT_EQ(stats.lines, 0u);
  EXPECT_TRUE(h.events.empty());
}

TEST(EventObserver, AttemptFieldInLineWins) {
  History h;
  ASSERT_TRUE(
      observe_event_line(R"({"ts_ns":1,"rank":0,"source":"harness","event":"launch","attempt":3})", h, 0));
  EXPECT_EQ(h.events[0].attempt, 3);
  EXPECT_FALSE(observe_event_line("[1,2]", h));
}

struct EventMechanism {
  const char* event;
  const char* extra;
  const char* mechanism;  // nullptr: no detection
};

class WorkloadEventDetection : public ::testing::TestWithParam<EventMechanism> {};

TEST_P(WorkloadEventDetection, MapsToMechanism) {
  const auto& p = GetParam();
  History h;
  ASSERT_TRUE(observe_event_line(line(p.event, 2, p.extra), h));
  if (p.mechanism == nullptr) {
    EXPECT_TRUE(h.detections.empty());
    return;
  }
  ASSERT_EQ(h.detections.size(), 1u);
  EXPECT_EQ(h.detections[0].mechanism, p.mechanism);
  EXPECT_EQ(h.detections[0].rank, 2);
  EXPECT_EQ(h.detections[0].ts_ns, 1000);
  EXPECT_NE(h.detections[0].evidence.find(p.event), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(
    AllEvents, WorkloadEventDetection,
    ::testing::Values(EventMechanism{"watchdog_fired", R"(,"op":"allreduce","seq":50,"waited_ms":3000)",
                                     "workload_watchdog"},
                      EventMechanism{"nccl_error", R"(,"code":2,"where":"ncclAllReduce")", "api_error"},
                      EventMechanism{"async_error", R"(,"code":6)", "async_error"},
                      EventMechanism{"result_mismatch",
                                     R"(,"op":"allreduce","seq":3,"wrong":7,"checked":100)", "verification"},
                      EventMechanism{"nan_detected", R"(,"step":5,"value":"nan")", "nan_check"},
                      EventMechanism{"done", R"(,"iters":10,"verified":false)", "verification"},
                      EventMechanism{"done", R"(,"iters":10,"verified":true)", nullptr},
                      EventMechanism{"op", R"(,"seq":1)", nullptr}, EventMechanism{"abort", "", nullptr},
                      // A workload's own statement of its exit code (cpu-ring's abort, ncclfi-workload's
                      // exit): the contract's codes, a clean exit and a usage error.
                      EventMechanism{"abort", R"(,"reason":"rendezvous: a peer went away","exit_code":6)",
                                     "bootstrap"},
                      EventMechanism{"abort", R"(,"reason":"watchdog","exit_code":3)", "workload_watchdog"},
                      EventMechanism{"exit", R"(,"code":5,"reason":"async error")", "async_error"},
                      EventMechanism{"exit", R"(,"code":0)", nullptr},
                      EventMechanism{"exit", R"(,"code":64,"reason":"bad --ops")", nullptr},
                      EventMechanism{"abort", R"(,"exit_code":"6")", nullptr}));

// The abort that follows a watchdog_fired (or an nccl_error) says the same thing once more: one
// detection per rank and mechanism, at the first event.
TEST(EventObserver, AbortAfterItsOwnEventIsNotASecondDetection) {
  History h;
  ASSERT_TRUE(observe_event_line(line("watchdog_fired", 1, R"(,"op":"allreduce","seq":7)"), h));
  ASSERT_TRUE(observe_event_line(
      R"({"ts_ns":2000,"rank":1,"source":"cpu-ring","event":"abort","exit_code":3,"reason":"watchdog"})", h));
  ASSERT_TRUE(observe_event_line(
      R"({"ts_ns":2100,"rank":2,"source":"cpu-ring","event":"abort","exit_code":3,"reason":"watchdog"})", h));
  // ncclfi-workload says it with an exit event.
  ASSERT_TRUE(observe_event_line(
      R"({"ts_ns":2200,"rank":1,"source":"gpu-workload","event":"exit","code":3,"reason":"watchdog"})", h));
  ASSERT_EQ(h.detections.size(), 2u);
  EXPECT_EQ(h.detections[0].ts_ns, 1000);
  EXPECT_EQ(h.detections[0].rank, 1);
  EXPECT_EQ(h.detections[1].rank, 2);  // rank 2 said only "abort": that is its detection
  EXPECT_EQ(h.detections[1].mechanism, "workload_watchdog");
}

TEST(Mechanisms, KnownListHasDesignNamesAndBootstrap) {
  for (const char* m : {"api_error", "async_error", "workload_watchdog", "torch_watchdog", "torch_heartbeat",
                        "nccl_tests_timeout", "verification", "nan_check", "peer_exit", "launcher_teardown",
                        "ras", "harness_deadline", "bootstrap"}) {
    EXPECT_TRUE(is_known_mechanism(m)) << m;
  }
  EXPECT_FALSE(is_known_mechanism("psychic"));
}

}  // namespace
}  // namespace ncclfi::harness
