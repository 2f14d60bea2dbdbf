// The runs of a repeated scenario (`ncclfi run --repeat N`) are named apart in every report: "name#2"
// in the console table and the failure details, summary.json's run_name, JUnit's test case name and
// runs.csv (reports.h: run_names).
#include <gtest/gtest.h>

#include "report_spec.h"
#include "reports.h"
#include "run_names.h"

namespace ncclfi::harness {
namespace {

RunRecord failed(const std::string& name) {
  RunRecord r;
  r.scenario = name;
  r.run_dir = "runs/" + name + "/t";
  r.harness_error = "the job could not start";
  return r;
}

std::vector<RunRecord> suite() {
  RunRecord skipped;
  skipped.scenario = "gpu-only";
  skipped.skipped = true;
  skipped.skip_reason = "needs 2 GPUs";
  return {failed("net-delay"), failed("once"), failed("net-delay"), failed("net-delay"), skipped};
}

TEST(RunNames, RepeatsAreNumberedAndASingleRunKeepsItsName) {
  EXPECT_EQ(run_names(suite()),
            (std::vector<std::string>{"net-delay#1", "once", "net-delay#2", "net-delay#3", "gpu-only"}));
}

TEST(RunNames, EveryReportNamesEachRepeat) {
  const auto records = suite();
  const std::string table = format_final_table(records);
  for (const char* name : {"net-delay#1", "net-delay#2", "net-delay#3"}) {
    EXPECT_NE(table.find(std::string("\n") + name + " "), std::string::npos) << name << " row in\n" << table;
    EXPECT_NE(table.find(std::string("ERROR ") + name + "\n"), std::string::npos) << name << " in\n" << table;
  }
  const nlohmann::json summary = summary_json(SuiteInfo{}, records);
  EXPECT_EQ(summary["runs"][2]["run_name"], "net-delay#2");
  EXPECT_EQ(summary["runs"][2]["scenario"], "net-delay");
  EXPECT_EQ(summary["runs"][1]["run_name"], "once");
  const std::string junit = render_junit(SuiteInfo{}, records);
  for (const char* name : {"net-delay#1", "net-delay#2", "net-delay#3", "once"}) {
    EXPECT_NE(junit.find(std::string("name=\"") + name + "\" time="), std::string::npos) << name << junit;
  }
  const ReportSpec* csv = find_report("csv");
  ASSERT_NE(csv, nullptr);
  const std::string rows = csv->render(SuiteInfo{}, records);
  EXPECT_NE(rows.find(",run_name\r\n"), std::string::npos) << rows;
  EXPECT_NE(rows.find(",net-delay#3\r\n"), std::string::npos) << rows;
}

}  // namespace
}  // namespace ncclfi::harness
