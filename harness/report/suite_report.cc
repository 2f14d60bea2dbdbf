// The suite's files (report_spec.h) and re-rendering from run directories.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "json_field_error.h"
#include "ncclfi/bounded_input.h"
#include "report_spec.h"
#include "reports.h"
#include "verdict_input.h"

namespace ncclfi::harness {

std::vector<std::string> write_suite_reports(const SuiteInfo& suite, const std::vector<RunRecord>& records,
                                             const std::vector<ReportRequest>& requests) {
  namespace fs = std::filesystem;
  const fs::path dir = suite.out_dir.empty() ? fs::path(".") : fs::path(suite.out_dir);
  std::vector<std::pair<const ReportSpec*, std::string>> outputs;
  for (const ReportSpec* spec : report_specs()) {
    if (spec->in_every_suite) outputs.emplace_back(spec, (dir / spec->default_file).string());
  }
  for (const ReportRequest& r : requests) {
    const std::string path = r.path.empty() ? (dir / r.spec->default_file).string() : r.path;
    if (std::find(outputs.begin(), outputs.end(), std::make_pair(r.spec, path)) == outputs.end()) {
      outputs.emplace_back(r.spec, path);
    }
  }
  std::vector<std::string> written;
  for (const auto& [spec, path] : outputs) {
    write_file_atomic(path, spec->render(suite, records));
    written.push_back(path);
  }
  return written;
}

namespace {

// Where a suite's run went: its run_dir as summary.json holds it (absolute, or relative to where `ncclfi
// run` ran), else the same <scenario>/<time> beside the suite's own runs/suites/<time>.
std::filesystem::path suite_run_dir(const std::filesystem::path& suite_dir, const std::string& run_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(fs::path(run_dir) / "verdict.json", ec)) return run_dir;
  const fs::path given(run_dir);
  return suite_dir.parent_path().parent_path() / given.parent_path().filename() / given.filename();
}

// summary.json's runs read as load_suite_runs takes them: a field of another type throws the library's
// type_error (which json_field_error turns into words).
void read_summary_fields(const nlohmann::json& summary) {
  if (!summary.is_object() || !summary.contains("runs") || !summary["runs"].is_array()) return;
  for (const auto& run : summary["runs"]) {
    if (!run.is_object()) continue;
    for (const char* key : {"status", "scenario", "skip_reason", "run_dir"}) (void)run.value(key, "");
    if (run.contains("tags") && run["tags"].is_array()) (void)run["tags"].get<std::vector<std::string>>();
  }
}

// The runs a suite directory (runs/suites/<time>) lists in its summary.json, in the suite's order: the
// verdicts are in the run directories, not under the suite's. A skipped run has none: its summary line
// is enough.
std::vector<RunRecord> load_suite_runs(const std::filesystem::path& suite_dir) {
  std::string text;
  if (const std::string problem =
          read_regular_file((suite_dir / "summary.json").string(), kMaxInputFileBytes, text);
      !problem.empty()) {
    return {};
  }
  const auto summary = nlohmann::json::parse(text, nullptr, false);
  if (!summary.is_object() || !summary.contains("runs") || !summary["runs"].is_array()) return {};
  read_summary_fields(summary);  // a field of another type throws here, before anything is taken
  std::vector<RunRecord> records;
  for (const auto& run : summary["runs"]) {
    if (!run.is_object()) continue;
    if (run.value("status", "") == "skipped") {
      RunRecord r;
      r.scenario = run.value("scenario", "");
      r.skipped = true;
      r.skip_reason = run.value("skip_reason", "");
      if (run.contains("tags") && run["tags"].is_array())
        r.tags = run["tags"].get<std::vector<std::string>>();
      records.push_back(std::move(r));
      continue;
    }
    auto loaded = load_runs((suite_run_dir(suite_dir, run.value("run_dir", "")) / "verdict.json").string());
    records.insert(records.end(), loaded.begin(), loaded.end());
  }
  return records;
}

// Every verdict.json at or under `dir` (or `dir` itself, a file).
std::vector<std::filesystem::path> verdict_paths(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<fs::path> verdicts;
  if (fs::is_regular_file(dir)) {
    verdicts.push_back(dir);
    return verdicts;
  }
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (it->is_regular_file() && it->path().filename() == "verdict.json") verdicts.push_back(it->path());
  }
  return verdicts;
}

}  // namespace

RunRecord read_verdict(const std::string& path) {
  std::string text;
  if (const std::string error = read_regular_file(path, kMaxInputFileBytes, text); !error.empty())
    throw std::runtime_error(error);
  // A verdict nests an event's fields a few levels down; deeper is no verdict ncclfi wrote (and
  // rendering it would recurse once per level). parse_json_input's errors name the file's place.
  nlohmann::json doc;
  try {
    doc = parse_json_input(text, {kMaxJsonDepth + 16, false});
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
  const JsonReader read = [](const nlohmann::json& d) { (void)run_record_from_json(d); };
  try {
    RunRecord r = run_record_from_json(doc);
    if (r.run_dir.empty()) r.run_dir = std::filesystem::path(path).parent_path().string();
    return r;
  } catch (const std::exception& e) {
    throw std::runtime_error(json_field_error(path, doc, read, e));
  }
}

namespace {

// What is wrong with a suite directory's summary.json, and with the verdict of each run it lists.
std::vector<std::string> unreadable_suite(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / "summary.json").string();
  std::string text;
  if (!read_regular_file(path, kMaxInputFileBytes, text).empty()) return {};
  const auto summary = nlohmann::json::parse(text, nullptr, false);
  try {
    read_summary_fields(summary);
  } catch (const std::exception& e) {
    return {json_field_error(path, summary, read_summary_fields, e)};
  }
  std::vector<std::string> problems;
  if (!summary.is_object() || !summary.contains("runs") || !summary["runs"].is_array()) return problems;
  for (const auto& run : summary["runs"]) {
    if (!run.is_object() || run.value("status", "") == "skipped") continue;
    const auto verdict = suite_run_dir(dir, run.value("run_dir", "")) / "verdict.json";
    if (!std::filesystem::is_regular_file(verdict)) continue;
    try {
      (void)read_verdict(verdict.string());
    } catch (const std::exception& e) {
      problems.push_back(e.what());
    }
  }
  return problems;
}

}  // namespace

std::vector<std::string> unreadable_verdicts(const std::string& dir) {
  std::vector<std::string> problems;
  if (std::filesystem::is_regular_file(std::filesystem::path(dir) / "summary.json"))
    return unreadable_suite(dir);
  for (const auto& path : verdict_paths(dir)) {
    try {
      (void)read_verdict(path.string());
    } catch (const std::exception& e) {
      problems.push_back(e.what());
    }
  }
  return problems;
}

// A suite directory (one with summary.json: runs/suites/<time>) holds no verdict: its runs are the ones
// its summary lists, in its order.
std::vector<RunRecord> load_runs(const std::string& dir) {
  namespace fs = std::filesystem;
  if (!fs::exists(dir)) throw std::runtime_error(dir + ": no such run directory");
  if (fs::is_regular_file(fs::path(dir) / "summary.json")) return load_suite_runs(dir);
  const std::vector<fs::path> verdicts = verdict_paths(dir);
  std::vector<RunRecord> records;
  for (const auto& path : verdicts) {
    try {
      records.push_back(read_verdict(path.string()));
    } catch (const std::exception& e) {
      RunRecord r;
      r.scenario = path.parent_path().string();
      r.run_dir = path.parent_path().string();
      r.harness_error = std::string("unreadable verdict: ") + e.what();
      r.judgement.verdict = Answer::kUnknown;
      records.push_back(std::move(r));
    }
  }
  std::sort(records.begin(), records.end(),
            [](const RunRecord& a, const RunRecord& b) { return a.run_dir < b.run_dir; });
  return records;
}

std::string rerender_reports(const std::string& dir, ConsoleStyle style,
                             const std::vector<ReportRequest>& requests) {
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
  for (const auto& file : write_suite_reports(suite, records, requests)) {
    if (fs::path(file).filename() == "report.html") style.html_report = file;
  }
  return format_final_table(records, style);
}

}  // namespace ncclfi::harness
