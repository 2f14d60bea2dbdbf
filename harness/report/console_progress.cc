// The live progress line: the suite's position, the run's pass and attempt, the times, and what the
// run has seen so far; fitted to the terminal by leaving out the least useful parts first.
#include <algorithm>
#include <climits>
#include <cstdio>

#include "console_text.h"
#include "reports.h"

namespace ncclfi::harness {
namespace {

// "45s", "3m05s", "1h02m": short enough for a line that is redrawn five times a second.
std::string duration_text(double seconds) {
  const long s = seconds < 0 ? 0 : static_cast<long>(seconds + 0.5);
  char text[32];
  if (s < 60) {
    std::snprintf(text, sizeof text, "%lds", s);
  } else if (s < 3600) {
    std::snprintf(text, sizeof text, "%ldm%02lds", s / 60, s % 60);
  } else {
    std::snprintf(text, sizeof text, "%ldh%02ldm", s / 3600, s % 3600 / 60);
  }
  return text;
}

// One part of the line; when the line is too wide, the part with the lowest `keep` goes first.
struct Part {
  std::string text;
  int keep;
};

std::string of(size_t k, size_t n) {
  return std::to_string(k) + "/" + std::to_string(n);
}

std::vector<Part> progress_parts(const ProgressState& s) {
  std::vector<Part> parts{{"[" + of(s.index, s.total) + "] " + s.scenario, INT_MAX}};
  if (s.repeats > 1) parts.push_back({"run " + of(s.repeat, s.repeats), 95});
  if (!s.pass.empty()) parts.push_back({s.pass, 90});
  if (s.rounds > 0)
    parts.push_back({"round " + std::to_string(s.round) + "/" + std::to_string(s.rounds), 60});
  if (!s.phase.empty() && s.phase != "running") parts.push_back({s.phase, 65});
  if (s.attempt > 0) parts.push_back({"attempt " + std::to_string(s.attempt + 1), 50});
  if (s.ranks_total > 0)
    parts.push_back({"ranks " + std::to_string(s.ranks_running) + "/" + std::to_string(s.ranks_total), 30});
  char times[64];
  if (s.deadline_s > 0) {
    std::snprintf(times, sizeof times, "%.1fs/%.0fs", s.elapsed_s, s.deadline_s);
    parts.push_back({times, 85});
  } else if (s.elapsed_s > 0) {
    std::snprintf(times, sizeof times, "%.1fs", s.elapsed_s);
    parts.push_back({times, 85});
  }
  if (s.injections > 0) parts.push_back({"injected " + std::to_string(s.injections), 20});
  if (!s.detections.empty()) {
    std::string seen;
    for (const auto& d : s.detections) seen += (seen.empty() ? "" : ",") + d;
    parts.push_back({"detected: " + seen, 40});
  }
  if (s.suite_elapsed_s >= 0) parts.push_back({"suite " + duration_text(s.suite_elapsed_s), 86});
  if (s.eta_s) parts.push_back({"ETA " + duration_text(*s.eta_s), 88});
  return parts;
}

std::string join(const std::vector<Part>& parts) {
  std::string line;
  for (const auto& p : parts) line += (line.empty() ? "" : "  ") + p.text;
  return line;
}

// Parts kept this much or more say where the suite is (the run, the pass, the times, the ETA): the
// scenario's name is cut to make room for them before they go.
constexpr int kEssential = 80;

// Leaves out the least kept part (never the name) whose `keep` is below `below`; false when none is.
bool drop_least(std::vector<Part>& parts, int below) {
  auto least = parts.end();
  for (auto it = parts.begin() + 1; it != parts.end(); ++it) {
    if (it->keep < below && (least == parts.end() || it->keep < least->keep)) least = it;
  }
  if (least == parts.end()) return false;
  parts.erase(least);
  return true;
}

}  // namespace

std::string format_progress_line(const ProgressState& s, size_t width) {
  std::vector<Part> parts = progress_parts(s);
  if (width == 0) return join(parts);
  // One column short of the width: a line that fills the last column makes the terminal wrap.
  const size_t limit = width - 1;
  const std::string name = parts[0].text;
  auto too_wide = [&] { return display_width(join(parts)) > limit; };
  while (too_wide() && drop_least(parts, kEssential)) {
  }
  if (too_wide()) {  // a long name gives way to the essential parts, down to a third of the line
    const size_t rest = display_width(join(parts)) - display_width(name);
    const size_t shortest = std::min(display_width(name), std::max<size_t>(16, limit / 3));
    parts[0].text = clip(name, std::max(limit > rest ? limit - rest : 0, shortest));
  }
  while (too_wide() && drop_least(parts, INT_MAX)) {
  }
  if (parts.size() == 1) parts[0].text = name;  // alone, the name may have all the room
  return clip(join(parts), limit);
}

}  // namespace ncclfi::harness
