#include "reference_pace.h"

#include <algorithm>
#include <map>
#include <sstream>

#include <re2/re2.h>

#include "ncclfi/bounded_input.h"
#include "noise.h"

namespace ncclfi::diagnose {
namespace {

struct Summary {
  double seconds_per_iteration = 0;
  std::string file;
  size_t line = 0;
  std::string text;
};

// Every summary line of `files` (only the newest attempt's where the files name attempts).
std::vector<Summary> summaries(const std::vector<InputFile>& files) {
  static const re2::RE2 summary(R"((\d+) iterations of \d+ bytes in ([0-9.]+) s)");
  int newest = -1;
  for (const InputFile& f : files) newest = std::max(newest, f.attempt);
  std::vector<Summary> found;
  for (const InputFile& f : files) {
    if (f.attempt != newest) continue;
    std::string text;
    if (!read_regular_file(f.path, kMaxLogFileBytes, text).empty()) continue;
    std::istringstream in(text);
    std::string line;
    for (size_t n = 1; std::getline(in, line); ++n) {
      long iterations = 0;
      double seconds = 0;
      if (!re2::RE2::PartialMatch(line, summary, &iterations, &seconds) || iterations <= 0) continue;
      found.push_back(Summary{seconds / static_cast<double>(iterations), f.shown, n, line.substr(0, 400)});
    }
  }
  return found;
}

}  // namespace

std::optional<SlowJob> slower_than_references(const InputSet& inputs) {
  const std::vector<Summary> job = summaries(inputs.files);
  if (job.empty() || inputs.references.empty()) return std::nullopt;
  std::map<std::string, std::vector<InputFile>> runs;  // reference run -> its files
  for (const auto& [run, file] : inputs.references) runs[run].push_back(file);
  SlowJob slow;
  for (const auto& [run, files] : runs) {
    std::vector<double> paces;
    for (const Summary& s : summaries(files)) paces.push_back(s.seconds_per_iteration);
    if (paces.empty()) continue;
    ++slow.references;
    slow.reference_seconds_per_iteration =
        std::max(slow.reference_seconds_per_iteration, harness::median(paces).value_or(0));
  }
  std::vector<double> paces;
  const Summary* slowest = &job.front();
  for (const Summary& s : job) {
    paces.push_back(s.seconds_per_iteration);
    if (s.seconds_per_iteration > slowest->seconds_per_iteration) slowest = &s;
  }
  slow.seconds_per_iteration = harness::median(paces).value_or(0);
  if (slow.references == 0 || slow.reference_seconds_per_iteration <= 0 ||
      slow.seconds_per_iteration < kSlowerThanReference * slow.reference_seconds_per_iteration) {
    return std::nullopt;
  }
  slow.file = slowest->file;
  slow.line = slowest->line;
  slow.text = slowest->text;
  return slow;
}

}  // namespace ncclfi::diagnose
