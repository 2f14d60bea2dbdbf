// The per-link test an operator runs after a slow or corrupting job (ncclfi-cpu-ring --mode linktest, each
// ring link alone, timed and checked). Its table names the link, not only the rank, so it tells one bad
// link from a rank whose every link is slow:
//   #   link           time(ms)   busbw(MB/s)   #wrong
//       rank 0 -> rank 1       162.1           6.1        0
// Each rank prints the row of the link into it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ncclfi::diagnose {

struct LinkRow {
  int from = -1, to = -1;
  double ms = 0, busbw_mbs = 0;
  unsigned long long wrong = 0;
};

// A row of the table, or nullopt for any other line.
std::optional<LinkRow> parse_link_row(std::string_view line);

// What the table shows about one rank: the link into it delivered wrong data (degraded_link), both links
// through it did (the rank itself corrupts: no network site), the link into it alone is slow
// (degraded_link), or both links through a rank are slow (pcie: the rank's own path to the network, which
// every one of its links crosses).
struct LinkFinding {
  enum class Kind { kWrongData, kWrongRank, kSlowLink, kSlowRank } kind = Kind::kSlowLink;
  int rank = -1;
  size_t row = 0;  // index into the rows given: the link into `rank`
  std::string site, why;
};

// A link is slow below this share of the median bandwidth of the table's links (the links of a healthy
// table are within a factor of two or three of each other; a degraded one is an order of magnitude off).
inline constexpr double kSlowLinkShare = 0.25;

std::vector<LinkFinding> judge_link_test(const std::vector<LinkRow>& rows);

}  // namespace ncclfi::diagnose
