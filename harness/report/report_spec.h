// The suite's report formats: one file per format (its renderer and its ReportSpec), listed in
// report_registry.cc. `ncclfi run --report NAME[=PATH]` and `ncclfi report` write them, `ncclfi list
// reports` and the table in docs/cli.md are generated from the list.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "reports.h"

namespace ncclfi::harness {

struct ReportSpec {
  std::string_view name;          // --report NAME
  std::string_view default_file;  // its file in the suite directory
  std::string_view summary;       // one line, for `ncclfi list reports`
  bool in_every_suite = false;    // written into every suite directory, asked for or not
  std::string (*render)(const SuiteInfo& suite, const std::vector<RunRecord>& records) = nullptr;
};

// Every format, in the order `ncclfi list reports` shows them.
const std::vector<const ReportSpec*>& report_specs();
// The format named `name`, or nullptr.
const ReportSpec* find_report(std::string_view name);

// One `--report NAME[=PATH]`: the format and where it goes ("": its default file in the suite directory).
struct ReportRequest {
  const ReportSpec* spec = nullptr;
  std::string path;
};
// Parses "junit" or "junit=ci/junit.xml". Throws std::invalid_argument naming the formats there are.
ReportRequest parse_report_request(std::string_view text);

// Writes the formats written into every suite directory there, under their default files, and each of
// `requests`: at its path, or at its default file in suite.out_dir. Atomically; returns the files written,
// in that order.
std::vector<std::string> write_suite_reports(const SuiteInfo& suite, const std::vector<RunRecord>& records,
                                             const std::vector<ReportRequest>& requests = {});
// load_runs + write_suite_reports into `dir` (and `requests`); returns the final table text, laid out as
// `style` says (its html_report: the one written here).
std::string rerender_reports(const std::string& dir, ConsoleStyle style = {},
                             const std::vector<ReportRequest>& requests = {});

// The formats as a Markdown table (name, default file, in every suite, what it holds): docs/cli.md holds it.
std::string report_catalogue_markdown();

}  // namespace ncclfi::harness
