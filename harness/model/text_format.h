// Short pieces of the text that reasons, evidence and reports print (lists, seconds): one way each.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace ncclfi::harness {

// The items of `values` (strings as they are, numbers through std::to_string) separated by `sep`.
template <typename Range>
std::string join(const Range& values, std::string_view sep = ", ") {
  std::string out;
  bool first = true;
  for (const auto& v : values) {
    if (!first) out += sep;
    first = false;
    if constexpr (std::is_arithmetic_v<std::decay_t<decltype(v)>>) {
      out += std::to_string(v);
    } else {
      out += v;
    }
  }
  return out;
}

// "1,3" for the ranks {1, 3}; "none" for no rank.
template <typename Ranks>
std::string ranks_text(const Ranks& ranks) {
  std::string s = join(ranks, ",");
  return s.empty() ? std::string("none") : s;
}

// "3.02s", or "-" when there is no value (tables and reasons).
std::string format_seconds(std::optional<double> seconds);
// "3.02 s" under ten seconds, "12.3 s" above, or "-" (the timeout matrix's sentences and cells).
std::string seconds_text(std::optional<double> seconds);
// A duration that may be short (a training step): "12.3 ms" below a second, else as seconds_text.
std::string duration_text(std::optional<double> seconds);
// A wall-clock time (ns since the epoch) in UTC: "2026-12-02 13:38:26 UTC", with `milliseconds`
// "2026-12-02 13:38:26.265 UTC"; "-" for none (0 or less).
std::string utc_time_text(int64_t ns, bool milliseconds);

// The number of single-character edits (insert, delete, replace, swap of neighbours) from a to b: how far
// a typed name is from a real one ("did you mean").
size_t edit_distance(const std::string& a, const std::string& b);

}  // namespace ncclfi::harness
