// The per-fault firing decision: after_calls, count, after_ms, runtime control, seeded probability,
// and exactness of count and after_calls under 8 threads.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <thread>

#include <fiu-control.h>
#include <gtest/gtest.h>

#include "ncclfi/injector.h"
#include "ncclfi/point.h"

namespace ncclfi {
namespace {

// Each test uses its own libfiu point name so enabled points never leak between tests.
const char* enable_point(const char* name) {
  ensure_fiu_initialised();
  fiu_enable(name, 1, nullptr, 0);
  return name;
}

Fault fault_with(const std::string& id, Trigger trigger) {
  Fault f;
  f.id = id;
  f.layer = Layer::kApi;
  f.kind = "error";
  f.trigger = trigger;
  return f;
}

// The 1-based call indices at which `fault` fired over `calls` decisions.
std::vector<uint64_t> schedule(ArmedFault& fault, const char* point, uint64_t calls) {
  std::vector<uint64_t> fired;
  for (uint64_t i = 1; i <= calls; ++i) {
    if (fault.decide(point) != 0) fired.push_back(i);
  }
  return fired;
}

TEST(Trigger, AfterCallsFiresOnExactlyTheNthMatchingCall) {
  const char* point = enable_point("test/trigger/after_calls");
  ArmedFault fault(fault_with("ac", Trigger{.after_calls = 5}), 1, false);
  for (uint64_t call = 1; call <= 4; ++call) {
    EXPECT_EQ(fault.decide(point), 0u) << call;
    EXPECT_EQ(ArmedFault::last_call_on_this_thread(), call);
    EXPECT_EQ(ArmedFault::last_firing_on_this_thread(), 0u);
  }
  EXPECT_EQ(fault.decide(point), 1u);
  EXPECT_EQ(ArmedFault::last_call_on_this_thread(), 5u);
  EXPECT_EQ(ArmedFault::last_firing_on_this_thread(), 1u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(fault.decide(point), 0u);  // count = 1 by default
  EXPECT_EQ(fault.matching_calls(), 105u);
  EXPECT_EQ(fault.firings(), 1u);
}

TEST(Trigger, CountIsExact) {
  const char* point = enable_point("test/trigger/count");
  ArmedFault fault(fault_with("cnt", Trigger{.after_calls = 3, .count = 4}), 1, false);
  EXPECT_EQ(schedule(fault, point, 50), (std::vector<uint64_t>{3, 4, 5, 6}));
  EXPECT_EQ(fault.firings(), 4u);
}

TEST(Trigger, CountZeroIsUnlimited) {
  const char* point = enable_point("test/trigger/unlimited");
  ArmedFault fault(fault_with("unl", Trigger{.after_calls = 2, .count = 0}), 1, false);
  EXPECT_EQ(fault.decide(point), 0u);
  for (uint64_t firing = 1; firing <= 1000; ++firing) ASSERT_EQ(fault.decide(point), firing);
  EXPECT_EQ(fault.firings(), 1000u);
}

TEST(Trigger, AfterMsWaitsFromTheFirstMatchingCall) {
  const char* point = enable_point("test/trigger/after_ms");
  ArmedFault fault(fault_with("ams", Trigger{.after_ms = 80, .count = 0}), 1, false);
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(fault.decide(point), 0u);  // starts the clock
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(75)) {
    EXPECT_EQ(fault.decide(point), 0u);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(90));
  EXPECT_EQ(fault.decide(point), 1u);
  EXPECT_EQ(fault.decide(point), 2u);
}

TEST(Trigger, LibfiuHasTheLastWordOnThePoint) {
  const char* point = enable_point("test/trigger/libfiu_gate");
  ArmedFault fault(fault_with("gate", Trigger{.count = 0}), 1, false);
  EXPECT_EQ(fault.decide(point), 1u);
  fiu_disable(point);
  EXPECT_EQ(fault.decide(point), 0u);
  EXPECT_EQ(fault.decide("test/trigger/never_enabled"), 0u);
  fiu_enable(point, 1, nullptr, 0);
  EXPECT_NE(fault.decide(point), 0u);
}

TEST(Trigger, RuntimeControlArmsAndDisarms) {
  const char* point = enable_point("test/trigger/control");
  ArmedFault fault(fault_with("ctl", Trigger{.count = 0, .armed = false}), 1, true);
  EXPECT_EQ(fault.control_point(), "ncclfi/fault/ctl");
  for (int i = 0; i < 10; ++i) EXPECT_EQ(fault.decide(point), 0u);
  EXPECT_EQ(fault.matching_calls(), 0u);  // calls are counted only while armed
  fiu_enable(fault.control_point().c_str(), 1, nullptr, 0);
  EXPECT_EQ(fault.decide(point), 1u);
  EXPECT_EQ(fault.decide(point), 2u);
  fiu_disable(fault.control_point().c_str());
  EXPECT_EQ(fault.decide(point), 0u);
  EXPECT_EQ(fault.matching_calls(), 2u);
}

TEST(Trigger, RuntimeControlKeepsAfterCallsCountingFromArming) {
  const char* point = enable_point("test/trigger/control_after");
  ArmedFault fault(fault_with("ctl2", Trigger{.after_calls = 3, .armed = false}), 1, true);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(fault.decide(point), 0u);
  fiu_enable(fault.control_point().c_str(), 1, nullptr, 0);
  EXPECT_EQ(schedule(fault, point, 10), (std::vector<uint64_t>{3}));
}

TEST(Trigger, SeededUniformIsAPureFunctionInUnitInterval) {
  for (uint64_t call = 0; call < 1000; ++call) {
    double u = seeded_uniform(7, "f", call);
    EXPECT_GE(u, 0.0);
    EXPECT_LT(u, 1.0);
    EXPECT_EQ(u, seeded_uniform(7, "f", call));
  }
  EXPECT_NE(seeded_uniform(7, "f", 1), seeded_uniform(8, "f", 1));
  EXPECT_NE(seeded_uniform(7, "f", 1), seeded_uniform(7, "g", 1));
  EXPECT_NE(seeded_uniform(7, "f", 1), seeded_uniform(7, "f", 2));
}

TEST(Trigger, SeededProbabilityGivesTheSameScheduleTwice) {
  const char* point = enable_point("test/trigger/probability");
  Trigger trig{.probability = 0.3, .count = 0};
  ArmedFault first(fault_with("prob", trig), 5, false);
  ArmedFault second(fault_with("prob", trig), 5, false);
  ArmedFault other_seed(fault_with("prob", trig), 6, false);
  auto a = schedule(first, point, 2000);
  auto b = schedule(second, point, 2000);
  auto c = schedule(other_seed, point, 2000);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_GT(a.size(), 450u);
  EXPECT_LT(a.size(), 750u);
  // trigger.seed overrides the plan's seed; 0 means "the plan's".
  Trigger own_seed = trig;
  own_seed.seed = 5;
  ArmedFault overriding(fault_with("prob", own_seed), 999, false);
  EXPECT_EQ(schedule(overriding, point, 2000), a);
}

TEST(Trigger, ProbabilityWithCountStopsAtCount) {
  const char* point = enable_point("test/trigger/probability_count");
  ArmedFault fault(fault_with("pc", Trigger{.after_calls = 10, .probability = 0.5, .count = 7}), 3, false);
  auto fired = schedule(fault, point, 1000);
  ASSERT_EQ(fired.size(), 7u);
  EXPECT_GE(fired.front(), 10u);
}

TEST(Trigger, RateIsNearTheProbabilityOverManyCalls) {
  const char* point = enable_point("test/trigger/rate");
  for (double p : {0.01, 0.1, 0.5, 0.9}) {
    ArmedFault fault(fault_with("rate", Trigger{.probability = p, .count = 0}), 1234, false);
    const uint64_t calls = 200000;
    double rate = static_cast<double>(schedule(fault, point, calls).size()) / static_cast<double>(calls);
    // 5 standard deviations of a binomial proportion.
    double tolerance = 5 * std::sqrt(p * (1 - p) / static_cast<double>(calls));
    EXPECT_NEAR(rate, p, tolerance) << "p=" << p;
  }
}

// 8 threads share one fault; returns every call index that fired (sorted).
std::vector<uint64_t> fire_concurrently(ArmedFault& fault, const char* point, int threads, int calls_each) {
  std::mutex mu;
  std::vector<uint64_t> fired;
  std::atomic<int> ready{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      std::vector<uint64_t> mine;
      ready.fetch_add(1);
      while (ready.load() < threads) std::this_thread::yield();  // start together, even on 2 cores
      for (int i = 0; i < calls_each; ++i) {
        if (fault.decide(point) != 0) mine.push_back(ArmedFault::last_call_on_this_thread());
      }
      std::lock_guard<std::mutex> lock(mu);
      fired.insert(fired.end(), mine.begin(), mine.end());
    });
  }
  for (auto& th : pool) th.join();
  std::sort(fired.begin(), fired.end());
  return fired;
}

TEST(TriggerThreads, CountIsExactUnder8Threads) {
  const char* point = enable_point("test/threads/count");
  ArmedFault fault(fault_with("t-count", Trigger{.count = 1000}), 1, false);
  auto fired = fire_concurrently(fault, point, 8, 100000);
  EXPECT_EQ(fired.size(), 1000u);
  EXPECT_EQ(fault.firings(), 1000u);
  EXPECT_EQ(fault.matching_calls(), 800000u);
}

TEST(TriggerThreads, AfterCallsAndCountAreExactUnder8Threads) {
  const char* point = enable_point("test/threads/after_calls");
  const uint64_t n = 123457;
  ArmedFault fault(fault_with("t-after", Trigger{.after_calls = n, .count = 1000}), 1, false);
  auto fired = fire_concurrently(fault, point, 8, 100000);
  ASSERT_EQ(fired.size(), 1000u);
  EXPECT_EQ(fired.front(), n);  // the first firing is exactly the Nth matching call
  for (size_t i = 0; i < fired.size(); ++i) ASSERT_EQ(fired[i], n + i);  // and then the next count-1 calls
}

TEST(TriggerThreads, SingleFiringAtTheNthCallUnder8Threads) {
  const char* point = enable_point("test/threads/single");
  ArmedFault fault(fault_with("t-single", Trigger{.after_calls = 654321}), 1, false);
  auto fired = fire_concurrently(fault, point, 8, 100000);
  ASSERT_EQ(fired.size(), 1u);
  EXPECT_EQ(fired[0], 654321u);
}

TEST(TriggerThreads, ProbabilityCountIsExactUnder8Threads) {
  const char* point = enable_point("test/threads/probability");
  ArmedFault fault(fault_with("t-prob", Trigger{.probability = 0.01, .count = 500}), 9, false);
  auto fired = fire_concurrently(fault, point, 8, 100000);
  EXPECT_EQ(fired.size(), 500u);
  EXPECT_EQ(fault.firings(), 500u);
  for (uint64_t call : fired) EXPECT_LT(seeded_uniform(9, "t-prob", call), 0.01);  // only drawn calls fire
}

TEST(TriggerThreads, UnlimitedAfterCallsUnder8Threads) {
  const char* point = enable_point("test/threads/unlimited");
  ArmedFault fault(fault_with("t-unl", Trigger{.after_calls = 1000, .count = 0}), 1, false);
  auto fired = fire_concurrently(fault, point, 8, 10000);
  EXPECT_EQ(fired.size(), 80000u - 999u);
  EXPECT_EQ(fired.front(), 1000u);
}

}  // namespace
}  // namespace ncclfi
