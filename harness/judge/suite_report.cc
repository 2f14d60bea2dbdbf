// The suite files (summary.json, junit.xml, report.html and their copies) and re-rendering from run
// directories.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "ncclfi/bounded_input.h"
#include "reports.h"

namespace ncclfi::harness {

void FileReport::write(const Suite& suite) {
  const std::string text = render(suite);
  for (const auto& path : paths_) write_file_atomic(path, text);
}

SuiteFiles write_suite_reports(const SuiteInfo& suite, const std::vector<RunRecord>& records,
                               const std::string& junit_copy, const std::string& html_copy) {
  namespace fs = std::filesystem;
  const fs::path dir = suite.out_dir.empty() ? fs::path(".") : fs::path(suite.out_dir);
  SuiteFiles files{
      (dir / "summary.json").string(), (dir / "junit.xml").string(), (dir / "report.html").string(), {}};
  std::vector<std::string> junit = {files.junit_xml}, html = {files.report_html};
  if (!junit_copy.empty()) {
    junit.push_back(junit_copy);
    files.copies.push_back(junit_copy);
  }
  if (!html_copy.empty()) {
    html.push_back(html_copy);
    files.copies.push_back(html_copy);
  }
  std::vector<std::unique_ptr<Report>> reports;
  reports.push_back(make_summary_json_report({files.summary_json}));
  reports.push_back(make_junit_report(junit));
  reports.push_back(make_html_report(html));
  const Suite whole{suite, records};
  for (const auto& report : reports) report->write(whole);
  return files;
}

std::vector<RunRecord> load_runs(const std::string& dir) {
  namespace fs = std::filesystem;
  if (!fs::exists(dir)) throw std::runtime_error(dir + ": no such run directory");
  std::vector<fs::path> verdicts;
  if (fs::is_regular_file(dir)) {
    verdicts.push_back(dir);
  } else {
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
         it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec) break;
      if (it->is_regular_file() && it->path().filename() == "verdict.json") verdicts.push_back(it->path());
    }
  }
  std::vector<RunRecord> records;
  for (const auto& path : verdicts) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    try {
      // A verdict nests an event's fields a few levels down; deeper is no verdict ncclfi wrote (and
      // rendering it would recurse once per level).
      RunRecord r = run_record_from_json(parse_json_input(text.str(), {kMaxJsonDepth + 16, false}));
      if (r.run_dir.empty()) r.run_dir = path.parent_path().string();
      records.push_back(std::move(r));
    } catch (const std::exception& e) {
      RunRecord r;
      r.scenario = path.parent_path().string();
      r.run_dir = path.parent_path().string();
      r.harness_error = path.string() + ": unreadable verdict: " + e.what();
      r.judgement.verdict = Answer::kUnknown;
      records.push_back(std::move(r));
    }
  }
  std::sort(records.begin(), records.end(),
            [](const RunRecord& a, const RunRecord& b) { return a.run_dir < b.run_dir; });
  return records;
}

std::string rerender_reports(const std::string& dir, bool color) {
  auto records = load_runs(dir);
  SuiteInfo suite;
  suite.name = "ncclfi";
  namespace fs = std::filesystem;
  suite.out_dir = fs::is_regular_file(dir) ? fs::path(dir).parent_path().string() : dir;
  for (const auto& r : records) {
    if (r.history.start_ns > 0 && (suite.start_ns == 0 || r.history.start_ns < suite.start_ns)) {
      suite.start_ns = r.history.start_ns;
    }
    suite.end_ns = std::max(suite.end_ns, r.history.end_ns);
  }
  write_suite_reports(suite, records);
  return format_final_table(records, color);
}

}  // namespace ncclfi::harness
