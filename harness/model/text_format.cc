// Seconds as reports print them (text_format.h).
#include "text_format.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <vector>

namespace ncclfi::harness {

std::string format_seconds(std::optional<double> seconds) {
  if (!seconds) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fs", *seconds);
  return buf;
}

std::string seconds_text(std::optional<double> seconds) {
  if (!seconds) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, *seconds < 10 ? "%.2f s" : "%.1f s", *seconds);
  return buf;
}

std::string duration_text(std::optional<double> seconds) {
  if (!seconds || *seconds >= 1 || *seconds <= -1) return seconds_text(seconds);
  char buf[32];
  const double ms = *seconds * 1e3;
  std::snprintf(buf, sizeof buf, ms < 10 && ms > -10 ? "%.2f ms" : "%.1f ms", ms);
  return buf;
}

std::string utc_time_text(int64_t ns, bool milliseconds) {
  if (ns <= 0) return "-";
  const auto secs = static_cast<time_t>(ns / 1'000'000'000);
  tm parts{};
  gmtime_r(&secs, &parts);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02d %02d:%02d:%02d", parts.tm_year + 1900, parts.tm_mon + 1,
                parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec);
  std::string text = buf;
  if (milliseconds) {
    std::snprintf(buf, sizeof buf, ".%03d", static_cast<int>((ns / 1'000'000) % 1000));
    text += buf;
  }
  return text + " UTC";
}

size_t edit_distance(const std::string& a, const std::string& b) {
  // Optimal string alignment distance: Levenshtein plus a swap of two neighbours ("rnu" -> "run").
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1, 0));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace ncclfi::harness
