#include "log_reader.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <system_error>

namespace ncclfi::diagnose {
namespace {

namespace fs = std::filesystem;

// The harness's own records, which diagnose never reads: it judges from what the job printed.
bool is_harness_record(const std::string& name) {
  return name == "plan.json" || name == "verdict.json" || name == "events.jsonl" || name == "summary.json" ||
         name == "junit.xml" || name == "report.html" || name == "scenario.json";
}

int attempt_of(const std::string& name) {
  if (name.rfind("attempt-", 0) != 0) return -1;
  try {
    return std::stoi(name.substr(8));
  } catch (const std::exception&) {
    return -1;
  }
}

void add_tree(const fs::path& root, bool run, InputSet& set) {
  std::vector<InputFile> found;
  std::error_code ec;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    const fs::path rel = p.lexically_relative(root);
    const std::string first = rel.begin() != rel.end() ? rel.begin()->string() : std::string();
    if (run && it.depth() == 0 && it->is_directory(ec) && attempt_of(first) < 0) {
      it.disable_recursion_pending();  // baselines, mps, ...: not the failed job's output
      continue;
    }
    if (it->is_directory(ec)) continue;
    const std::string name = p.filename().string();
    if (is_harness_record(name)) continue;
    if (run && (it.depth() == 0 || p.extension() != ".log")) continue;
    if (!it->is_regular_file(ec)) {
      set.skipped.push_back(p.string() + ": not a regular file");
      continue;
    }
    // The launch a file belongs to: an attempt-N folder on its path (a run directory's, or a lab
    // workspace's training/attempt-N/).
    int attempt = -1;
    for (const fs::path& part : rel.parent_path())
      if (const int n = attempt_of(part.string()); n >= 0) attempt = n;
    found.push_back(InputFile{p.string(), rel.string(), attempt});
    if (set.files.size() + found.size() > kMaxLogFiles) break;  // refused by the caller; stop walking
  }
  std::sort(found.begin(), found.end(),
            [](const InputFile& a, const InputFile& b) { return a.path < b.path; });
  for (auto& f : found) set.files.push_back(std::move(f));
}

// The run's baselines: the same job without its faults, each a run directory of its own.
void add_references(const fs::path& run, InputSet& set) {
  std::error_code ec;
  for (fs::directory_iterator it(run, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind("baseline-", 0) != 0 || !it->is_directory(ec) || it->is_symlink(ec)) continue;
    InputSet one;
    add_tree(it->path(), /*run=*/true, one);
    for (InputFile& f : one.files) {
      f.shown = name + "/" + f.shown;
      if (set.references.size() >= kMaxLogFiles) return;
      set.references.emplace_back(name, std::move(f));
    }
  }
}

}  // namespace

bool is_run_dir(const std::string& dir) {
  std::error_code ec;
  const fs::path d(dir);
  bool has_attempt = false;
  for (fs::directory_iterator it(d, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_directory(ec) && attempt_of(it->path().filename().string()) >= 0) has_attempt = true;
  }
  return has_attempt && (fs::exists(d / "verdict.json", ec) || fs::exists(d / "plan.json", ec) ||
                         fs::exists(d / "events.jsonl", ec));
}

InputSet collect_inputs(const std::vector<std::string>& paths) {
  InputSet set;
  for (const std::string& path : paths) {
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (ec || !fs::exists(st)) throw std::invalid_argument(path + ": no such file or directory");
    if (fs::is_directory(st)) {
      const bool run = is_run_dir(path);
      set.run_dir = set.run_dir || run;
      add_tree(fs::path(path), run, set);
      if (run) add_references(fs::path(path), set);
    } else if (fs::is_regular_file(st)) {
      set.files.push_back(InputFile{path, fs::path(path).filename().string(), -1});
    } else {
      throw std::invalid_argument(path + ": neither a file nor a directory");
    }
    if (set.files.size() > kMaxLogFiles) {
      throw std::invalid_argument("more than " + std::to_string(kMaxLogFiles) +
                                  " files to read: give the directory of one job");
    }
  }
  return set;
}

}  // namespace ncclfi::diagnose
