// timeouts.html without running anything: a matrix whose cells each carry a known problem (or none) is
// rendered, and each cell's class, the settings' inline text, the healthy step times and the trial links
// are read back from the page.
#include <gtest/gtest.h>

#include <regex>

#include "timeouts_report.h"

namespace ncclfi::cli {
namespace {

TrialResult fired(bool detected, bool hung, bool left_running, const std::string& run_dir) {
  TrialResult t;
  t.fired = true;
  t.detected = detected;
  t.hung = hung;
  t.left_running = left_running;
  t.mechanism = detected ? "workload_watchdog" : "";
  if (detected) t.detection_s = 1.2;
  t.run_dir = run_dir;
  return t;
}

MatrixReport report() {
  MatrixReport r;
  r.scenario = "job";
  r.out_dir = "/out/timeouts/T";
  r.trials = 2;
  r.healthy.trials = r.healthy.clean = 1;
  r.healthy.median_step_s = 0.0031;
  r.healthy.largest_step_s = 0.0042;
  r.healthy.step_spread_s = 0.0004;
  r.healthy.startup_s = 1.5;
  r.settings = {{"good", "ends the job", {}, {{"MY_WATCHDOG_S", "1"}}, {}, {}},
                {"lax", "", {{"pg_timeout_s", 600}}, {}, 2, 0.5}};
  r.faults = {MatrixFault::kDeadRank, MatrixFault::kGpuHang};
  const std::string d = "/out/timeouts/T/";
  r.cells = {
      {"good",
       MatrixFault::kDeadRank,
       {fired(true, false, false, d + "a"), fired(true, false, false, d + "b")}},
      // Detected, but one trial ran to the deadline; and a fault that fired once in two trials: both are
      // findings, and neither may be green (today's page painted both so).
      {"good",
       MatrixFault::kGpuHang,
       {fired(true, false, true, d + "c"), fired(true, false, false, d + "d")}},
      {"lax", MatrixFault::kDeadRank, {fired(true, false, false, d + "e"), TrialResult{}}},
      {"lax",
       MatrixFault::kGpuHang,
       {fired(false, true, false, d + "g"), fired(false, true, false, d + "h")}},
  };
  r.recommendation.timeout_s = 1.0;
  r.findings = matrix_findings(r.settings, r.cells, r.recommendation);
  return r;
}

std::vector<std::string> cell_classes(const std::string& html) {
  std::vector<std::string> out;
  const std::regex td("<td class=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), td); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1]);
  return out;
}

TEST(MatrixHtml, CellsTheFindingsNameAreProblemsNeverGreen) {
  const MatrixReport r = report();
  const auto classes = cell_classes(matrix_html(r));
  // Rows are faults, columns settings: dead_rank (good, lax), gpu_hang (good, lax).
  ASSERT_EQ(classes.size(), 4u);
  EXPECT_EQ(classes[0], "ok");
  EXPECT_EQ(classes[1], "unfired problem");
  EXPECT_EQ(classes[2], "left problem");
  EXPECT_EQ(classes[3], "hung problem");
  for (const auto& c : r.cells)
    EXPECT_EQ(cell_has_finding(c), c.setting != "good" || c.fault != MatrixFault::kDeadRank);
}

TEST(MatrixHtml, SettingsShowInlineAndATimeoutUnderTheRecommendationIsMarked) {
  const std::string html = matrix_html(report());
  EXPECT_NE(html.find("<th>good<div class=\"setting\">ends the job; MY_WATCHDOG_S=1</div></th>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<th class=\"problem\">lax<div class=\"setting\">param pg_timeout_s=600; torchrun "
                      "--max-restarts=2</div></th>"),
            std::string::npos)
      << html;
}

// The NCCL_IB_TIMEOUT recommendation is shown where the collective timeout's is, and a setting whose
// NCCL_IB_TIMEOUT is under it has its heading marked.
TEST(MatrixHtml, TheIbTimeoutRecommendationIsShownAndASettingUnderItIsMarked) {
  MatrixReport r;
  r.scenario = "job";
  r.settings = {{"ib8", "", {}, {{"NCCL_IB_TIMEOUT", "8"}}, {}, {}},
                {"ib16", "", {}, {{"NCCL_IB_TIMEOUT", "16"}}, {}, {}}};
  r.faults = {MatrixFault::kNicDown};
  r.recommendation.timeout_s = 0.1;
  r.recommendation.ib_need_s = 0.1;
  r.recommendation.ib_timeout = 12;
  r.recommendation.ib_budget_s = 0.134;
  r.recommendation.ib_text = "recommended NCCL_IB_TIMEOUT: at least 12";
  const std::string html = matrix_html(r);
  EXPECT_NE(html.find("<th class=\"problem\">ib8<"), std::string::npos) << html;
  EXPECT_NE(html.find("<th>ib16<"), std::string::npos) << html;
  EXPECT_NE(html.find("<p id=\"ib-recommendation\"><b>recommended NCCL_IB_TIMEOUT: at least 12</b></p>"),
            std::string::npos)
      << html;
  const nlohmann::json j = to_json(r);
  EXPECT_EQ(j["recommendation"]["nccl_ib_timeout"]["min"], 12);
  EXPECT_EQ(j["recommendation"]["nccl_ib_timeout"]["text"], "recommended NCCL_IB_TIMEOUT: at least 12");
  EXPECT_NE(matrix_text(r).find("recommended NCCL_IB_TIMEOUT: at least 12\n"), std::string::npos);
}

TEST(MatrixHtml, ShortStepsReadInMilliseconds) {
  const std::string html = matrix_html(report());
  EXPECT_NE(html.find("step median 3.10 ms, largest 4.20 ms, spread 0.40 ms; startup 1.50 s"),
            std::string::npos)
      << html;
  EXPECT_EQ(html.find("0.00 s"), std::string::npos);
}

TEST(MatrixHtml, EachCellLinksToItsTrialsRelativeToThePage) {
  const MatrixReport r = report();
  const std::string html = matrix_html(r);
  EXPECT_NE(html.find("<a class=\"trial\" href=\"a/\""), std::string::npos) << html;
  EXPECT_NE(html.find("<a class=\"trial\" href=\"h/\""), std::string::npos);
  // A trial with no run directory is named, not linked.
  EXPECT_NE(html.find("<a class=\"trial\" href=\"e/\" title=\"\">trial 1</a>trial 2</div>"),
            std::string::npos);
  // A copy written elsewhere links from where it is.
  EXPECT_NE(matrix_html(r, "/out/copies").find("href=\"../timeouts/T/a/\""), std::string::npos);
}

}  // namespace
}  // namespace ncclfi::cli
