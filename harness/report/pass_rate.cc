// Pass rates of repeated runs (`ncclfi run --repeat N`): how often each scenario passed, so that a
// flaky one (passing only some of its runs) shows as such instead of as one lucky or unlucky verdict.
#include <algorithm>
#include <cstdio>
#include <map>

#include "reports.h"
#include "run_names.h"

namespace ncclfi::harness {

std::vector<PassRate> pass_rates(const std::vector<RunRecord>& records) {
  std::vector<PassRate> rates;
  for (const auto& r : records) {
    auto it =
        std::find_if(rates.begin(), rates.end(), [&](const PassRate& p) { return p.scenario == r.scenario; });
    if (it == rates.end()) {
      rates.push_back({r.scenario, 0, 0});
      it = rates.end() - 1;
    }
    if (r.skipped) continue;
    ++it->runs;
    if (run_status(r) == RunStatus::kPass) ++it->passed;
  }
  return rates;
}

std::vector<std::string> run_names(const std::vector<RunRecord>& records) {
  std::map<std::string, size_t> total, seen;
  for (const auto& r : records) ++total[r.scenario];
  std::vector<std::string> names;
  names.reserve(records.size());
  for (const auto& r : records) {
    const size_t n = ++seen[r.scenario];
    names.push_back(total[r.scenario] > 1 ? r.scenario + "#" + std::to_string(n) : r.scenario);
  }
  return names;
}

bool has_repeats(const std::vector<PassRate>& rates) {
  return std::any_of(rates.begin(), rates.end(), [](const PassRate& p) { return p.runs > 1; });
}

std::string format_pass_rates(const std::vector<PassRate>& rates) {
  if (!has_repeats(rates)) return "";
  size_t width = 0;
  for (const auto& p : rates) width = std::max(width, p.scenario.size());
  std::string out = "pass rate per scenario:\n";
  for (const auto& p : rates) {
    out += "  " + p.scenario + std::string(width - p.scenario.size(), ' ') + "  ";
    if (p.runs == 0) {
      out += "skipped\n";
      continue;
    }
    char text[96];
    std::snprintf(text, sizeof text, "%zu/%zu passed (%.0f%%)", p.passed, p.runs,
                  100.0 * static_cast<double>(p.passed) / static_cast<double>(p.runs));
    out += text;
    if (p.flaky()) out += ", flaky";
    out += "\n";
  }
  return out;
}

}  // namespace ncclfi::harness
