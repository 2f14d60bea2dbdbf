// Hostile rank output: classification stays linear in the line and bounded in memory (RE2, cut
// lines), and bad patterns are refused before they can run.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "observe.h"
#include "output_tailer.h"

namespace ncclfi {
namespace {

using harness::LineRegex;
using harness::LogClassifier;

// Two long runs of digits: std::regex recursed once per digit of \d+ and ran out of stack.
std::string digits_and_spaces(size_t bytes) {
  return std::string(bytes / 2, '1') + " " + std::string(bytes / 2, '2');
}

// One 50 KB line of digits and spaces overflowed std::regex's recursion (the nccl-tests #wrong row
// pattern) and killed ncclfi with SIGSEGV.
TEST(RobustClassifier, HugeDigitLineIsClassifiedWithoutCrashing) {
  const auto classifier = LogClassifier::builtin();
  EXPECT_FALSE(classifier.classify(digits_and_spaces(50'000)).has_value());
  EXPECT_FALSE(classifier.classify(digits_and_spaces(4'000'000)).has_value());
}

// (a*)*b backtracks exponentially in std::regex: ~22 a's pinned the harness at 100% CPU past its
// deadline. RE2 answers in linear time.
TEST(RobustClassifier, CatastrophicScenarioPatternAnswersAtOnce) {
  auto classifier = LogClassifier::builtin();
  classifier.add_pattern("api_error", "(a*)*b", "scenario:0");
  EXPECT_FALSE(classifier.classify(std::string(40, 'a')).has_value());
  EXPECT_FALSE(classifier.classify(std::string(1'000'000, 'a')).has_value());
  ASSERT_TRUE(classifier.classify(std::string(40, 'a') + "b").has_value());
}

TEST(RobustClassifier, LongMatchingLineIsClassifiedOnItsHeadAndSaysSo) {
  const auto classifier = LogClassifier::builtin();
  harness::History history;
  harness::OutputLine line;
  line.text = "NCCL WARN net failure " + std::string(harness::kMaxLineBytes * 2, 'x');
  ASSERT_TRUE(harness::observe_log_line(history, classifier, line).has_value());
  ASSERT_EQ(history.events.size(), 1u);
  EXPECT_EQ(history.events[0].fields.value("truncated_from_bytes", size_t{0}), line.text.size());
  // A pattern that only matches past the limit does not match: the limit is real.
  harness::OutputLine late;
  late.text = std::string(harness::kMaxLineBytes, ' ') + "NCCL WARN late";
  EXPECT_FALSE(classifier.classify(late.text).has_value());
}

TEST(RobustClassifier, DeeplyNestedOrLongPatternIsRefused) {
  const std::string deep = std::string(20000, '(') + "a" + std::string(20000, ')');
  const auto why = LineRegex::check(deep);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("longer than"), std::string::npos) << *why;
  auto classifier = LogClassifier::builtin();
  EXPECT_THROW(classifier.add_pattern("api_error", deep, "scenario:0"), std::invalid_argument);
}

TEST(RobustClassifier, PatternsOutsideRe2AreRefusedWithTheEnginesReason) {
  const auto why = LineRegex::check(R"((a)\1)");  // a backreference: not linear-time
  ASSERT_TRUE(why.has_value());
  EXPECT_FALSE(why->empty());
  EXPECT_FALSE(LineRegex::check(R"(\bNCCL error\b \d+)").has_value());
}

TEST(RobustClassifier, BoundedLineReaderKeepsTheHeadAndSkipsTheRest) {
  std::istringstream in(std::string(100'000, 'x') + "\nshort\n");
  std::string line;
  size_t full = 0;
  ASSERT_TRUE(harness::read_bounded_line(in, line, 10, &full));
  EXPECT_EQ(line, std::string(10, 'x'));
  EXPECT_EQ(full, 100'000u);
  ASSERT_TRUE(harness::read_bounded_line(in, line, 10));
  EXPECT_EQ(line, "short");
  EXPECT_FALSE(harness::read_bounded_line(in, line, 10));
}

class TailerFile : public ::testing::Test {
 protected:
  std::string path = ::testing::TempDir() + "ncclfi_tailer_" +
                     ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".log";
  void TearDown() override { std::remove(path.c_str()); }
};

// A rank that prints one endless line: the tailer hands out its head once, holds no more than the
// limit, and the next line comes through whole.
TEST_F(TailerFile, EndlessLineIsCutAndCounted) {
  std::ofstream(path) << std::string(3'000'000, 'y');
  cli::OutputTailer tailer(path, 0, 1000);
  auto lines = tailer.read_lines();
  for (int i = 0; i < 20; ++i) {
    auto more = tailer.read_lines();
    lines.insert(lines.end(), more.begin(), more.end());
  }
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], std::string(1000, 'y'));
  EXPECT_EQ(tailer.truncated_lines(), 1u);
  std::ofstream(path, std::ios::app) << "tail\nnext line\n";
  const auto rest = tailer.read_rest();
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0], "next line");
}

TEST_F(TailerFile, LongCompleteLineInOneChunkIsCut) {
  std::ofstream(path) << std::string(5000, 'z') << "\nok\n";
  cli::OutputTailer tailer(path, 0, 100);
  const auto lines = tailer.read_lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].size(), 100u);
  EXPECT_EQ(lines[1], "ok");
  EXPECT_EQ(tailer.truncated_lines(), 1u);
}

}  // namespace
}  // namespace ncclfi
