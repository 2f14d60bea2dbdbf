// Drill safety in the core: fault windows (duration_s, every_s, times) in the plan, their arithmetic and
// the per-call decision with its heal events; the allow-list of hosts.
#include <fiu-control.h>
#include <gtest/gtest.h>
#include <time.h>

#include "ncclfi/event_log.h"
#include "ncclfi/fault_window.h"
#include "ncclfi/host_allow.h"
#include "ncclfi/injector.h"
#include "ncclfi/point.h"
#include "test_support.h"

namespace ncclfi {
namespace {

constexpr int64_t kS = 1'000'000'000;

Fault parse(const nlohmann::json& fault) {
  return parse_fault(fault, "drill.json", "/faults/0");
}

std::string error_of(const nlohmann::json& fault) {
  try {
    parse(fault);
  } catch (const PlanError& e) {
    return e.what();
  }
  return "no error";
}

nlohmann::json net_delay(const nlohmann::json& trigger) {
  return {{"id", "d"}, {"layer", "net"}, {"kind", "delay"}, {"params", {{"ms", 1}}}, {"trigger", trigger}};
}

TEST(FaultWindows, ParseAndSerialiseRoundTrip) {
  const Fault f = parse(net_delay({{"count", 0}, {"duration_s", 1.5}, {"every_s", 4}, {"times", 3}}));
  ASSERT_TRUE(f.trigger.duration_s);
  EXPECT_DOUBLE_EQ(*f.trigger.duration_s, 1.5);
  EXPECT_DOUBLE_EQ(f.trigger.every_s, 4);
  EXPECT_EQ(f.trigger.times, 3u);
  EXPECT_TRUE(f.trigger.windowed());
  const Fault again = parse(to_json(f));
  EXPECT_EQ(to_json(again), to_json(f));
  EXPECT_FALSE(parse(net_delay({{"count", 0}})).trigger.windowed());
}

TEST(FaultWindows, InconsistentWindowsAreRefusedWithThePointer) {
  EXPECT_EQ(error_of(net_delay({{"times", 3}})),
            "drill.json: /faults/0/trigger/every_s: expected how often the 3 windows open (every_s > 0), got "
            "nothing");
  EXPECT_EQ(
      error_of(net_delay({{"every_s", 2}})),
      "drill.json: /faults/0/trigger/times: expected 2 or more windows with every_s (one window needs no "
      "every_s), got nothing");
  EXPECT_NE(error_of(net_delay({{"duration_s", 2}, {"every_s", 2}, {"times", 2}}))
                .find("/faults/0/trigger/duration_s: expected less than every_s (2)"),
            std::string::npos);
  EXPECT_NE(error_of(net_delay({{"duration_s", 0}})).find("/faults/0/trigger/duration_s"), std::string::npos);
  EXPECT_NE(error_of(net_delay({{"times", 0}, {"every_s", 1}})).find("/faults/0/trigger/times"),
            std::string::npos);
  EXPECT_NE(error_of(net_delay({{"every_s", 2e6}, {"times", 2}})).find("at most 1e6 seconds"),
            std::string::npos);
  const nlohmann::json kill = {
      {"id", "k"}, {"layer", "proc"}, {"kind", "kill"}, {"trigger", {{"duration_s", 1}}}};
  EXPECT_NE(error_of(kill).find("/faults/0/trigger/duration_s: expected no duration for a proc kill"),
            std::string::npos);
  const nlohmann::json stop = {{"id", "s"},
                               {"layer", "proc"},
                               {"kind", "stop"},
                               {"params", {{"ms", 100}}},
                               {"trigger", {{"duration_s", 1}}}};
  EXPECT_NE(error_of(stop).find("either params.ms or trigger.duration_s"), std::string::npos);
}

TEST(FaultWindows, AProcStopLastsItsWindow) {
  const Fault f =
      parse({{"id", "s"}, {"layer", "proc"}, {"kind", "stop"}, {"trigger", {{"duration_s", 2.5}}}});
  const auto stop = test::action_as<StopProcess>(f);
  ASSERT_TRUE(stop.resume_after_ms);
  EXPECT_DOUBLE_EQ(*stop.resume_after_ms, 2500);
}

TEST(FaultWindows, WindowArithmetic) {
  Trigger t;
  t.duration_s = 1;
  t.every_s = 4;
  t.times = 3;
  EXPECT_TRUE(window_at(t, 0).open);
  EXPECT_EQ(window_at(t, 0).index, 0u);
  EXPECT_FALSE(window_at(t, 1 * kS).open);  // healed at 1 s
  EXPECT_FALSE(window_at(t, 1 * kS).finished);
  EXPECT_TRUE(window_at(t, 4 * kS + 1).open);
  EXPECT_EQ(window_at(t, 4 * kS + 1).index, 1u);
  EXPECT_TRUE(window_at(t, 8 * kS).open);
  EXPECT_FALSE(window_at(t, 9 * kS).open);
  EXPECT_TRUE(window_at(t, 9 * kS).finished);
  EXPECT_TRUE(window_at(t, 40 * kS).finished);  // no fourth window
  EXPECT_FALSE(window_at(t, 40 * kS).open);
  EXPECT_EQ(window_span(t, 2).opens_ns, 8 * kS);
  EXPECT_EQ(*window_span(t, 2).closes_ns, 9 * kS);
  Trigger forever;  // no windows: open for ever
  EXPECT_TRUE(window_at(forever, 1000 * kS).open);
  Trigger repeated;  // windows without a duration last until the next one; the last one for ever
  repeated.every_s = 2;
  repeated.times = 2;
  EXPECT_EQ(*window_span(repeated, 0).closes_ns, 2 * kS);
  EXPECT_FALSE(window_span(repeated, 1).closes_ns);
}

void sleep_s(double s) {
  timespec ts{static_cast<time_t>(s),
              static_cast<long>((s - static_cast<double>(static_cast<time_t>(s))) * 1e9)};
  nanosleep(&ts, nullptr);
}

// A window of 0.2 s out of every 100 s: `count` firings in it, none once it closed (however slow the host:
// the sleep only makes the gap longer), and a heal event stamped when the window closed.
TEST(FaultWindows, FiresCountPerWindowThenHealsWithAnEvent) {
  test::TempDir dir;
  const std::string events = dir.file("events.jsonl");
  EventLog log(events, "net", 5);
  ensure_fiu_initialised();
  fiu_enable("test/drill/window", 1, nullptr, 0);
  Fault f = parse(net_delay({{"count", 2}, {"duration_s", 0.2}, {"every_s", 100}, {"times", 2}}));
  ArmedFault armed(f, 1, false);
  armed.set_heal_log(&log, 5, 0);
  const int64_t opened = Clock::mono_ns();
  EXPECT_NE(armed.decide("test/drill/window"), 0u);
  EXPECT_EQ(ArmedFault::last_window_on_this_thread(), 1u);
  EXPECT_NE(armed.decide("test/drill/window"), 0u);
  EXPECT_EQ(armed.decide("test/drill/window"), 0u) << "count is per window: 2";
  sleep_s(0.3);
  EXPECT_FALSE(armed.window_open_now());
  armed.record_heals(5);
  armed.record_heals(5);  // once per window
  EXPECT_EQ(armed.decide("test/drill/window"), 0u) << "healed: the window closed";
  const auto lines = test::read_lines(events);
  ASSERT_EQ(lines.size(), 1u);
  const auto heal = nlohmann::json::parse(lines[0]);
  EXPECT_EQ(heal["event"], "heal");
  EXPECT_EQ(heal["fault_id"], "d");
  EXPECT_EQ(heal["window"], 1);
  EXPECT_EQ(heal["rank"], 5);
  const int64_t closed_after = heal["mono_ns"].get<int64_t>() - opened;
  EXPECT_GE(closed_after, kS / 5);  // the window's close, not the moment a call noticed it
  EXPECT_LT(closed_after, kS / 5 + kS / 10);
  fiu_disable("test/drill/window");
}

TEST(AllowList, NamesGlobsShortNamesAndComments) {
  const AllowList list = parse_allow_list("node-1, gpu-[2-4]\n*.staging.example.com # the staging pool\n");
  EXPECT_EQ(list.describe(), "node-1, gpu-[2-4], *.staging.example.com");
  EXPECT_TRUE(list.allows("node-1"));
  EXPECT_TRUE(list.allows("NODE-1.prod.example.com")) << "the short name, without regard to case";
  EXPECT_TRUE(list.allows("gpu-3"));
  EXPECT_FALSE(list.allows("gpu-5"));
  EXPECT_TRUE(list.allows("a.staging.example.com"));
  EXPECT_FALSE(list.allows("a.prod.example.com"));
  EXPECT_FALSE(list.allows("node-10"));
  EXPECT_TRUE(AllowList{}.allows("anything")) << "no allow-list: every host";
  EXPECT_FALSE(parse_allow_list("  ").allows("node-1")) << "an empty list allows no host";
}

TEST(AllowList, FromTheEnvironmentAndAFileFailingClosed) {
  test::TempDir dir;
  test::write_text(dir.file("hosts"), "# staging\nstage-a\n");
  ::setenv("NCCLFI_ALLOWED_HOSTS_FILE", dir.file("hosts").c_str(), 1);
  ::setenv("NCCLFI_ALLOWED_HOSTS", "stage-b", 1);
  std::string warning;
  EXPECT_TRUE(host_allowed(&warning, "stage-a"));
  EXPECT_TRUE(host_allowed(&warning, "stage-b"));
  EXPECT_FALSE(host_allowed(&warning, "prod-7"));
  EXPECT_EQ(
      warning,
      "ncclfi: host 'prod-7' is not in the allowed hosts (stage-a, stage-b): no fault is injected here");
  ::setenv("NCCLFI_ALLOWED_HOSTS_FILE", dir.file("missing").c_str(), 1);
  EXPECT_FALSE(host_allowed(&warning, "stage-b")) << "an unreadable list allows nothing";
  EXPECT_NE(warning.find("the allow-list file"), std::string::npos);
  ::unsetenv("NCCLFI_ALLOWED_HOSTS_FILE");
  ::unsetenv("NCCLFI_ALLOWED_HOSTS");
  EXPECT_TRUE(host_allowed(&warning, "prod-7"));
}

}  // namespace
}  // namespace ncclfi
