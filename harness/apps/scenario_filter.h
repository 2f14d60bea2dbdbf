// `ncclfi run --filter`: which scenarios of the paths a suite runs. Each --filter value is a list of
// patterns separated by commas, and --filter may be given several times: all the patterns count
// together. A pattern is a shell glob (fnmatch: `*`, `?`, `[...]`) matched against the scenario's
// name and each of its tags, without regard to case; a pattern that starts with `!` excludes what it
// matches. A scenario runs when no exclusion matches it and, if there is any inclusion, some inclusion
// matches it (`--filter '!gpu'` alone runs everything but the GPU scenarios).
#pragma once

#include <string>
#include <vector>

namespace ncclfi::cli {

struct ScenarioFilter {
  std::vector<std::string> include, exclude;  // the patterns, without their `!`
};

// The patterns of the --filter values; blanks around a pattern and empty ones are dropped.
ScenarioFilter parse_scenario_filter(const std::vector<std::string>& values);
bool filter_keeps(const ScenarioFilter& filter, const std::string& name,
                  const std::vector<std::string>& tags);

}  // namespace ncclfi::cli
