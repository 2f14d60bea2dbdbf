// The drill report: the run told for the people on call, as a postmortem wants it. What was injected
// where (host, rank) and when, window by window; what each rank saw; who detected it first and how fast;
// when the job recovered; the verdict of each expectation; the control actions (arm, disarm, abort) and
// the hosts that refused to inject. One model (DrillReport), two renderings: Markdown (`drill-report.md`
// in each run directory, `ncclfi report --markdown`) and HTML (a section of report.html).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "history.h"
#include "reports.h"

namespace ncclfi::harness {

// One window of one fault in one attempt: from its first injection to its heal event (the window's end),
// else to its last injection. Faults without windows have one window, numbered 0.
struct FaultWindowSpan {
  std::string fault_id, kind, layer;
  int attempt = 0;
  uint64_t window = 0;
  int64_t start_ns = 0, end_ns = 0;
  bool healed = false;  // a heal event closed it
  std::set<int> ranks;
  std::set<std::string> hosts;
  int firings = 0;
};
// Every window of the run, in order of their start (the timeline shades these).
std::vector<FaultWindowSpan> fault_windows(const History& history);

// The report's content: facts, then sections of a table each.
struct DrillTable {
  std::vector<std::string> headers;
  std::vector<std::vector<std::string>> rows;
};
struct DrillSection {
  std::string heading;
  std::string text;  // a paragraph before the table (may be empty)
  DrillTable table;  // may have no rows
};
struct DrillReport {
  std::string title;
  std::vector<std::pair<std::string, std::string>> facts;
  std::vector<DrillSection> sections;
};
DrillReport make_drill_report(const RunRecord& record);

std::string drill_report_markdown(const RunRecord& record);
std::string drill_report_html(const RunRecord& record);  // a fragment for report.html

}  // namespace ncclfi::harness
