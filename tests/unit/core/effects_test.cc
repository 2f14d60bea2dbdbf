// The effects layer the three front ends share (ncclfi/effects.h): the seeded draws behind a delay's jitter
// and a corruption's bits, the words of an effect that changed nothing, and the exception barrier.
#include "ncclfi/effects.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "ncclfi/point.h"

namespace ncclfi {
namespace {

TEST(EffectsDraw, ADelayIsAPureFunctionOfSeedFaultAndFiringWithinItsBounds) {
  const Delay d{10, 5};
  std::set<double> seen;
  for (uint64_t firing = 1; firing <= 200; ++firing) {
    const double ms = d.draw(7, "f", firing);
    EXPECT_EQ(ms, d.draw(7, "f", firing)) << "same seed, same delay";
    EXPECT_GE(ms, 10.0);
    EXPECT_LT(ms, 15.0);
    seen.insert(ms);
  }
  EXPECT_GT(seen.size(), 190U) << "the firings draw different jitters";
  EXPECT_NE(d.draw(7, "f", 1), d.draw(8, "f", 1));
  EXPECT_NE(d.draw(7, "f", 1), d.draw(7, "g", 1));
  EXPECT_EQ((Delay{10, 0}.draw(7, "f", 1)), 10.0) << "no jitter, no draw";
}

// The trigger's `probability` draws seeded_uniform(seed, id, call): were the jitter that very draw, a fault
// with probability p would only ever get jitters below p * jitter_ms.
TEST(EffectsDraw, TheJitterIsIndependentOfTheProbabilityDraw) {
  const Delay d{0, 1};
  int same = 0;
  for (uint64_t n = 1; n <= 100; ++n) same += d.draw(7, "f", n) == seeded_uniform(7, "f", n) ? 1 : 0;
  EXPECT_EQ(same, 0);
}

TEST(EffectsDraw, ACorruptionSeedComesFromTheOwnSeedElseTheFaults) {
  EXPECT_EQ(corrupt_seed(3, 7, "f", 1), corrupt_seed(3, 9, "f", 1)) << "the own seed wins";
  EXPECT_EQ(corrupt_seed(std::nullopt, 7, "f", 1), corrupt_seed(7, 1, "f", 1)) << "else the fault's";
  EXPECT_NE(corrupt_seed(3, 7, "f", 1), corrupt_seed(3, 7, "f", 2)) << "each firing its own bits";
  EXPECT_NE(corrupt_seed(3, 7, "f", 1), corrupt_seed(3, 7, "g", 1)) << "each fault its own bits";
  for (uint64_t n = 1; n <= 50; ++n) {
    const double u = corrupt_draw(corrupt_seed(3, 7, "f", n));
    EXPECT_GE(u, 0.0);
    EXPECT_LT(u, 1.0);
  }
}

TEST(EffectsDraw, FlipBitsFlipsExactlyTheAskedDistinctBitsChosenByTheSeed) {
  for (uint64_t nbits : {0U, 1U, 7U, 300U, 511U, 512U, 900U}) {
    std::vector<unsigned char> a(64, 0x5a);
    std::vector<unsigned char> b = a;
    const std::vector<unsigned char> before = a;
    const auto flipped = flip_bits(a.data(), a.size(), nbits, 42);
    EXPECT_EQ(flip_bits(b.data(), b.size(), nbits, 42), flipped) << "same seed, same bits";
    EXPECT_EQ(a, b);
    int differing = 0;
    for (size_t i = 0; i < a.size(); ++i) differing += std::popcount(static_cast<unsigned>(a[i] ^ before[i]));
    EXPECT_EQ(static_cast<uint64_t>(differing), std::min<uint64_t>(nbits, 512)) << nbits;
    EXPECT_EQ(flipped.size(), std::min<uint64_t>(nbits, 512));
    EXPECT_TRUE(std::is_sorted(flipped.begin(), flipped.end()));
  }
  std::vector<unsigned char> x(64, 0);
  std::vector<unsigned char> y(64, 0);
  EXPECT_NE(flip_bits(x.data(), x.size(), 3, 1), flip_bits(y.data(), y.size(), 3, 2));
}

TEST(EffectsNoEffect, MarksTheEventAsTheJudgeSkipsIt) {
  nlohmann::json extra = nlohmann::json::object();
  mark_no_effect(extra, no_effect::kOpFailed);
  EXPECT_EQ(extra["effect"], "none: the op failed");
  EXPECT_TRUE(is_no_effect(extra["effect"].get<std::string>()));
  EXPECT_EQ(no_effect::cannot_act_at("drop", "net/connect"), "drop cannot act at net/connect");
  EXPECT_FALSE(is_no_effect("applied"));
}

std::vector<std::string> g_reports;
void remember(const char* where, const char* what) noexcept {
  g_reports.push_back(std::string(where) + ": " + what);
}

TEST(EffectsGuarded, StopsAnExceptionReportsItAndReturnsTheFallback) {
  g_reports.clear();
  EXPECT_EQ(guarded(remember, "call", -1, [] { return 3; }), 3);
  EXPECT_TRUE(g_reports.empty());
  EXPECT_EQ(guarded(remember, "call", -1, []() -> int { throw std::runtime_error("broken"); }), -1);
  EXPECT_EQ(guarded(remember, "other", -1, []() -> int { throw 5; }), -1);
  bool ran = false;
  guarded(remember, "void", [&] {
    ran = true;
    throw std::logic_error("bug");
  });
  EXPECT_TRUE(ran);
  EXPECT_EQ(g_reports,
            (std::vector<std::string>{"call: broken", "other: an exception of unknown type", "void: bug"}));
}

}  // namespace
}  // namespace ncclfi
