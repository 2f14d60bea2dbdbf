// Seconds as reports print them (text_format.h).
#include "text_format.h"

#include <cstdio>
#include <ctime>

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

}  // namespace ncclfi::harness
