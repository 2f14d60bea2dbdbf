#include "scenario_filter.h"

#include <fnmatch.h>

#include <algorithm>

namespace ncclfi::cli {
namespace {

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

// The name or one of the tags matches `pattern` (a glob; case does not matter).
bool matches(const std::string& pattern, const std::string& name, const std::vector<std::string>& tags) {
  auto hit = [&](const std::string& word) {
    return ::fnmatch(pattern.c_str(), word.c_str(), FNM_CASEFOLD) == 0;
  };
  return hit(name) || std::any_of(tags.begin(), tags.end(), hit);
}

}  // namespace

ScenarioFilter parse_scenario_filter(const std::vector<std::string>& values) {
  ScenarioFilter filter;
  for (const auto& value : values) {
    size_t start = 0;
    while (start <= value.size()) {
      const size_t comma = std::min(value.find(',', start), value.size());
      const std::string pattern = trimmed(value.substr(start, comma - start));
      start = comma + 1;
      if (pattern.empty() || pattern == "!") continue;
      if (pattern[0] == '!') {
        filter.exclude.push_back(trimmed(pattern.substr(1)));
      } else {
        filter.include.push_back(pattern);
      }
    }
  }
  return filter;
}

bool filter_keeps(const ScenarioFilter& filter, const std::string& name,
                  const std::vector<std::string>& tags) {
  for (const auto& pattern : filter.exclude) {
    if (matches(pattern, name, tags)) return false;
  }
  if (filter.include.empty()) return true;
  return std::any_of(filter.include.begin(), filter.include.end(),
                     [&](const std::string& pattern) { return matches(pattern, name, tags); });
}

}  // namespace ncclfi::cli
