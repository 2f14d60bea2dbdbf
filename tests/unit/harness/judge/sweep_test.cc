#include <gtest/gtest.h>

#include "sweep.h"
#include "sweep_report.h"

namespace ncclfi::harness {
namespace {

SweepPoint point(std::vector<std::string> values, Outcome o, std::optional<double> det) {
  SweepPoint p;
  p.values = std::move(values);
  p.outcome = o;
  p.detection_s = det;
  if (det) p.mechanisms = {"workload_watchdog"};
  p.status = RunStatus::kPass;
  return p;
}

TEST(SweepMatrix, OneAxisIsAList) {
  SweepAxes axes{{"/workload/args/7"}, {{"1", "3", "10"}}};
  std::vector<SweepPoint> points = {point({"1"}, Outcome::kDetected, 1.02),
                                    point({"10"}, Outcome::kClean, {})};
  const std::string m = render_sweep_matrix(axes, points);
  EXPECT_NE(m.find("/workload/args/7"), std::string::npos);
  EXPECT_NE(m.find("detected"), std::string::npos);
  EXPECT_NE(m.find("1.02s"), std::string::npos);
  EXPECT_NE(m.find("workload_watchdog"), std::string::npos);
  // the missing point (3) shows dashes
  EXPECT_NE(m.find("3   "), std::string::npos);
}

TEST(SweepMatrix, TwoAxesAreRowsAndColumns) {
  SweepAxes axes{{"/env/TIMEOUT", "/faults/0/params/ms"}, {{"1", "5"}, {"500", "2000"}}};
  std::vector<SweepPoint> points = {
      point({"1", "500"}, Outcome::kDetected, 1.1), point({"1", "2000"}, Outcome::kDetected, 1.05),
      point({"5", "500"}, Outcome::kClean, {}), point({"5", "2000"}, Outcome::kClean, {})};
  const std::string m = render_sweep_matrix(axes, points);
  EXPECT_NE(m.find("TIMEOUT \\ ms"), std::string::npos) << m;
  EXPECT_NE(m.find("500"), std::string::npos);
  EXPECT_NE(m.find("2000"), std::string::npos);
  EXPECT_NE(m.find("detected 1.10s"), std::string::npos);
  // row "5" has two clean cells
  auto row = m.substr(m.rfind("\n5 "));
  EXPECT_EQ(std::count(row.begin(), row.end(), 'c'), 2) << row;
  auto doc = sweep_json(axes, points);
  EXPECT_EQ(doc["points"].size(), 4u);
}

TimeoutTrial trial(double timeout, bool hang, bool fired, std::optional<double> det = {}) {
  TimeoutTrial t;
  t.timeout_s = timeout;
  t.real_hang = hang;
  t.fired = fired;
  t.detection_s = det;
  t.outcome = fired ? Outcome::kDetected : (hang ? Outcome::kHung : Outcome::kClean);
  return t;
}

TEST(RecommendTimeout, SmallestThatNeverFiredOnAStallWithHangDetection) {
  std::vector<TimeoutTrial> trials = {trial(1, false, true, 1.0),  trial(2, false, true, 2.0),
                                      trial(5, false, false),      trial(10, false, false),
                                      trial(1, true, true, 1.02),  trial(5, true, true, 5.03),
                                      trial(10, true, true, 10.04)};
  auto rec = recommend_timeout(trials);
  ASSERT_TRUE(rec.timeout_s);
  EXPECT_EQ(*rec.timeout_s, 5);
  EXPECT_TRUE(rec.hang_detected);
  ASSERT_TRUE(rec.hang_detection_s);
  EXPECT_DOUBLE_EQ(*rec.hang_detection_s, 5.03);
  EXPECT_NE(rec.reason.find("5s"), std::string::npos);
}

TEST(RecommendTimeout, NonMonotoneFiringPushesRecommendationUp) {
  // 5 s did not fire but 10 s did (flaky): only 20 s is trustworthy.
  auto rec = recommend_timeout({trial(5, false, false), trial(10, false, true), trial(20, false, false)});
  ASSERT_TRUE(rec.timeout_s);
  EXPECT_EQ(*rec.timeout_s, 20);
  EXPECT_FALSE(rec.hang_detected);
  EXPECT_NE(rec.reason.find("unmeasured"), std::string::npos);
}

TEST(RecommendTimeout, NoneWhenEveryTimeoutFiredOrNoStalls) {
  auto all_fired = recommend_timeout({trial(1, false, true), trial(2, false, true)});
  EXPECT_FALSE(all_fired.timeout_s);
  EXPECT_NE(all_fired.reason.find("larger"), std::string::npos);
  auto no_stalls = recommend_timeout({trial(1, true, true, 1.0)});
  EXPECT_FALSE(no_stalls.timeout_s);
}

TEST(RecommendTimeout, UndetectedHangIsReported) {
  auto rec = recommend_timeout({trial(5, false, false), trial(5, true, false)});
  ASSERT_TRUE(rec.timeout_s);
  EXPECT_FALSE(rec.hang_detected);
  EXPECT_NE(rec.reason.find("NOT detected"), std::string::npos);
}

TEST(MakeTimeoutTrial, FiredFromJudgement) {
  Judgement detected;
  detected.outcome = Outcome::kDetected;
  detected.detection_s = 3.0;
  detected.mechanisms = {"workload_watchdog"};
  EXPECT_TRUE(make_timeout_trial(3, true, detected).fired);
  Judgement hung;
  hung.outcome = Outcome::kHung;
  hung.mechanisms = {"harness_deadline"};
  hung.detection_s = 30;
  auto t = make_timeout_trial(3, true, hung);
  EXPECT_FALSE(t.fired);
  EXPECT_FALSE(t.detection_s);
  Judgement clean;
  clean.outcome = Outcome::kClean;
  EXPECT_FALSE(make_timeout_trial(3, false, clean).fired);
}

}  // namespace
}  // namespace ncclfi::harness
