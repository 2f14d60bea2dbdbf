// Per suite files (summary.json, junit.xml, report.html) and re-rendering from run directories.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "reports.h"

namespace ncclfi::harness {

nlohmann::json summary_json(const SuiteInfo& suite, const std::vector<RunRecord>& records) {
  nlohmann::json runs = nlohmann::json::array();
  size_t pass = 0, fail = 0, unknown = 0, skipped = 0;
  for (const auto& r : records) {
    std::string verdict = r.skipped ? "skipped" : std::string(to_string(r.judgement.verdict));
    if (!r.harness_error.empty() && !r.skipped) verdict = "unknown";
    if (verdict == "pass")
      ++pass;
    else if (verdict == "fail")
      ++fail;
    else if (verdict == "skipped")
      ++skipped;
    else
      ++unknown;
    runs.push_back({{"scenario", r.scenario},
                    {"tags", r.tags},
                    {"run_dir", r.run_dir},
                    {"verdict", verdict},
                    {"expected", expected_summary(r.expect)},
                    {"observed", observed_summary(r.judgement)},
                    {"outcome", std::string(to_string(r.judgement.outcome))},
                    {"mechanisms", r.judgement.mechanisms},
                    {"detection_s",
                     r.judgement.detection_s ? nlohmann::json(*r.judgement.detection_s) : nlohmann::json()},
                    {"restarts", r.judgement.restarts},
                    {"reasons", r.judgement.reasons},
                    {"skip_reason", r.skip_reason},
                    {"harness_error", r.harness_error}});
  }
  return {{"suite", suite.name},
          {"start_ns", suite.start_ns},
          {"end_ns", suite.end_ns},
          {"total", records.size()},
          {"passed", pass},
          {"failed", fail},
          {"unknown", unknown},
          {"skipped", skipped},
          {"runs", runs}};
}

SuiteFiles write_suite_reports(const SuiteInfo& suite, const std::vector<RunRecord>& records,
                               const std::string& junit_path, const std::string& html_path) {
  namespace fs = std::filesystem;
  const fs::path dir = suite.out_dir.empty() ? fs::path(".") : fs::path(suite.out_dir);
  SuiteFiles files{(dir / "summary.json").string(),
                   junit_path.empty() ? (dir / "junit.xml").string() : junit_path,
                   html_path.empty() ? (dir / "report.html").string() : html_path};
  write_file_atomic(
      files.summary_json,
      summary_json(suite, records).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  write_file_atomic(files.junit_xml, render_junit(suite, records));
  write_file_atomic(files.report_html, render_html(suite, records));
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
      RunRecord r = run_record_from_json(nlohmann::json::parse(text.str()));
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
