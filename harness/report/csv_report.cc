// runs.csv: one row per run, for a spreadsheet or a database import (RFC 4180: comma-separated, fields
// with a comma, a quote or a line break quoted, quotes doubled, CRLF line ends).
#include <cstdio>
#include <optional>

#include "report_spec.h"
#include "report_text.h"
#include "reports.h"
#include "run_names.h"
#include "text_format.h"

namespace ncclfi::harness {
namespace {

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

// Seconds as a plain number with millisecond precision ("" when unknown), which spreadsheets parse.
std::string csv_seconds(std::optional<double> seconds) {
  if (!seconds) return "";
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", *seconds);
  return text;
}

std::string csv_row(const std::vector<std::string>& fields) {
  std::string row;
  for (const auto& f : fields) row += (row.empty() ? "" : ",") + csv_field(f);
  return row + "\r\n";
}

std::string render_csv(const SuiteInfo& /*suite*/, const std::vector<RunRecord>& records) {
  std::string out = csv_row({"scenario", "status", "expected", "observed", "outcome", "mechanisms",
                             "detection_s", "restarts", "seconds", "reason", "run_dir", "run_name"});
  const std::vector<std::string> names = run_names(records);
  for (size_t i = 0; i < records.size(); ++i) {
    const RunRecord& r = records[i];
    const bool ran = !r.skipped;
    std::string reason = r.skipped                     ? r.skip_reason
                         : !r.harness_error.empty()    ? r.harness_error
                         : r.judgement.reasons.empty() ? std::string()
                                                       : r.judgement.reasons.front();
    out += csv_row(
        {r.scenario, std::string(to_string(run_status(r))), expected_summary(r.expect),
         ran ? observed_summary(r.judgement) : "", ran ? std::string(to_string(r.judgement.outcome)) : "",
         ran ? join(r.judgement.mechanisms, " ") : "", ran ? csv_seconds(r.judgement.detection_s) : "",
         ran ? std::to_string(r.judgement.restarts) : "", ran ? csv_seconds(run_seconds(r)) : "", reason,
         r.run_dir, names[i]});
  }
  return out;
}

}  // namespace

extern const ReportSpec kCsvReport = {
    .name = "csv",
    .default_file = "runs.csv",
    .summary =
        "CSV (RFC 4180): one row per run with its status, outcome, mechanisms, detection time and reason",
    .render = render_csv,
};

}  // namespace ncclfi::harness
