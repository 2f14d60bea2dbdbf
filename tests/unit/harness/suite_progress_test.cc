// The suite's progress: a line redrawn in place that fits a terminal, plain lines at least every 30 s in
// a log, and an ETA from the deadlines and the runs so far.
#include "suite_progress.h"

#include <gtest/gtest.h>

#include <sstream>

namespace ncclfi::cli {
namespace {

struct FakeClock {
  double now = 100;
};

harness::ProgressState running(double elapsed) {
  harness::ProgressState st;
  st.scenario = "ignored: the suite knows its position";
  st.pass = "faulted";
  st.phase = "running";
  st.elapsed_s = elapsed;
  st.deadline_s = 30;
  st.ranks_total = 4;
  st.ranks_running = 4;
  st.detections = {"a_rather_long_mechanism_name", "another_long_mechanism_name"};
  return st;
}

TEST(SuiteProgress, EtaStartsFromTheDeadlinesThenFollowsTheRunsSoFar) {
  FakeClock clock;
  std::ostringstream out;
  SuiteProgress p(
      out, true, [] { return size_t{80}; }, {{"a", 60}, {"b", 120}, {"a", 60}}, [&] { return clock.now; });
  p.start({0, 1, 2, 1, 2});
  EXPECT_DOUBLE_EQ(p.eta_s(clock.now), 240) << "nothing ran yet: the bounds";
  clock.now += 10;
  EXPECT_DOUBLE_EQ(p.eta_s(clock.now), 230);
  clock.now += 20;  // run a took 30 s of its 60
  p.finish();
  p.start({1, 2, 2, 0, 0});
  // b: its bound at the pace so far (half of it); a again: as long as a took.
  EXPECT_DOUBLE_EQ(p.eta_s(clock.now), 60 + 30);
}

TEST(SuiteProgress, TerminalLineIsRedrawnInPlaceWithinTheWidth) {
  FakeClock clock;
  std::ostringstream out;
  SuiteProgress p(
      out, true, [] { return size_t{80}; }, {{"net-drop-recv-hang", 30}}, [&] { return clock.now; });
  p.start({0, 1, 1, 0, 0});
  EXPECT_EQ(out.str(), "") << "on a terminal the redrawn line tells the start";
  p.update(running(2));
  p.finish();
  const std::string text = out.str();
  ASSERT_EQ(text.rfind("\r\033[K", 0), 0u) << text;
  EXPECT_EQ(text.find('\n'), std::string::npos) << text;
  const std::string line = text.substr(4, text.rfind("\r\033[K") - 4);
  EXPECT_LE(line.size(), 79u) << line;
  EXPECT_EQ(line.rfind("[1/1] net-drop-recv-hang  faulted", 0), 0u) << line;
  EXPECT_NE(line.find("ETA "), std::string::npos) << line;
  EXPECT_EQ(text.substr(text.size() - 4), "\r\033[K") << "the line is erased at the run's end";
}

TEST(SuiteProgress, LogGetsAPlainLineAtTheStartAndEveryThirtySeconds) {
  FakeClock clock;
  std::ostringstream out;
  SuiteProgress p(
      out, false, [] { return size_t{0}; }, {{"x", 100}, {"y", 100}}, [&] { return clock.now; });
  p.start({0, 1, 2, 1, 3});
  for (int i = 0; i < 70; ++i) {  // 70 s of updates, five a second
    for (int j = 0; j < 5; ++j) {
      clock.now += 0.2;
      p.update(running(clock.now - 100));
    }
  }
  std::istringstream lines(out.str());
  std::vector<std::string> seen;
  for (std::string line; std::getline(lines, line);) seen.push_back(line);
  ASSERT_EQ(seen.size(), 3u) << out.str();  // the start, +30 s, +60 s
  EXPECT_EQ(seen[0].rfind("[1/2] x  run 1/3  starting", 0), 0u) << seen[0];
  EXPECT_NE(seen[1].find("suite 30s"), std::string::npos) << seen[1];
  EXPECT_NE(seen[1].find("detected: a_rather_long_mechanism_name"), std::string::npos)
      << "a log line is whole";
  EXPECT_EQ(out.str().find('\r'), std::string::npos);
  p.finish();
  p.start({1, 2, 2, 0, 0});
  EXPECT_NE(out.str().find("[2/2] y  starting"), std::string::npos) << out.str();
}

}  // namespace
}  // namespace ncclfi::cli
