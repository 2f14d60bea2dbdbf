// junit.xml in the shape Jenkins' and GitLab's JUnit readers accept: one <testsuite> with one
// <testcase> per scenario; fail -> <failure>, unknown or harness error -> <error>, skipped ->
// <skipped message=reason>. The status of each run is run_status().
#include <cstdio>

#include "report_spec.h"
#include "report_text.h"
#include "reports.h"
#include "run_names.h"

namespace ncclfi::harness {
namespace {

std::string seconds_attr(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", s < 0 ? 0.0 : s);
  return buf;
}

std::string classname(const RunRecord& r) {
  // Group by the first tag (cpu / gpu / labs) so CI UIs show a tree; fall back to "ncclfi".
  return r.tags.empty() ? std::string("ncclfi") : "ncclfi." + r.tags.front();
}

}  // namespace

std::string render_junit(const SuiteInfo& suite, const std::vector<RunRecord>& records) {
  const StatusCounts counted = count_statuses(records);
  const size_t failures = counted.fail, errors = counted.unknown + counted.error, skipped = counted.skipped;
  double total = 0;
  for (const auto& r : records) total += run_seconds(r).value_or(0);
  if (suite.end_ns > suite.start_ns && suite.start_ns > 0)
    total = static_cast<double>(suite.end_ns - suite.start_ns) / 1e9;
  const std::string counts = " tests=\"" + std::to_string(records.size()) + "\" failures=\"" +
                             std::to_string(failures) + "\" errors=\"" + std::to_string(errors) +
                             "\" skipped=\"" + std::to_string(skipped) + "\" time=\"" + seconds_attr(total) +
                             "\"";
  std::string x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  x += "<testsuites name=\"" + xml_escape(suite.name) + "\"" + counts + ">\n";
  x += "  <testsuite name=\"" + xml_escape(suite.name) + "\"" + counts + ">\n";
  const std::vector<std::string> names = run_names(records);
  for (size_t i = 0; i < records.size(); ++i) {
    const RunRecord& r = records[i];
    x += "    <testcase classname=\"" + xml_escape(classname(r)) + "\" name=\"" + xml_escape(names[i]) +
         "\" time=\"" + seconds_attr(run_seconds(r).value_or(0)) + "\">\n";
    const RunStatus status = run_status(r);
    if (status == RunStatus::kSkipped) {
      x += "      <skipped message=\"" + xml_escape(r.skip_reason) + "\"/>\n";
      x += "      <system-out>" + xml_escape("skipped: " + r.skip_reason + "\n") + "</system-out>\n";
      x += "    </testcase>\n";
      continue;
    }
    std::string details = "expected: " + expected_summary(r.expect) +
                          "\nobserved: " + observed_summary(r.judgement) +
                          "\ndetection: " + format_seconds(r.judgement.detection_s) + "\n";
    for (const auto& c : r.judgement.checks) {
      details += std::string(to_string(c.answer)) + " " + c.field + ": " + c.reason + "\n";
    }
    if (!r.run_dir.empty()) details += "run dir: " + r.run_dir + "\n";
    std::string first_reason = r.judgement.reasons.empty() ? std::string() : r.judgement.reasons.front();
    if (status == RunStatus::kError) {
      x += "      <error message=\"" + xml_escape(r.harness_error) + "\" type=\"harness_error\">" +
           xml_escape(details) + "</error>\n";
    } else if (status == RunStatus::kFail) {
      x += "      <failure message=\"" + xml_escape(first_reason) + "\" type=\"fail\">" +
           xml_escape(details) + "</failure>\n";
    } else if (status == RunStatus::kUnknown) {
      x += "      <error message=\"" + xml_escape(first_reason) + "\" type=\"unknown\">" +
           xml_escape(details) + "</error>\n";
    }
    x += "      <system-out>" + xml_escape(details) + "</system-out>\n";
    x += "    </testcase>\n";
  }
  x += "  </testsuite>\n</testsuites>\n";
  return x;
}

extern const ReportSpec kJunitReport = {
    .name = "junit",
    .default_file = "junit.xml",
    .summary = "JUnit XML: one test case per run (failures, errors for unknown and harness errors, skips)",
    .in_every_suite = true,
    .render = render_junit,
};

}  // namespace ncclfi::harness
