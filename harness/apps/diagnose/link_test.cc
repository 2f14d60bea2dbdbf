#include "link_test.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

namespace ncclfi::diagnose {

std::optional<LinkRow> parse_link_row(std::string_view line) {
  if (line.size() > 200 || line.find("->") == std::string_view::npos) return std::nullopt;
  const std::string text(line);
  LinkRow row;
  int consumed = 0;
  if (std::sscanf(text.c_str(), " rank %d -> rank %d %lf %lf %llu %n", &row.from, &row.to, &row.ms,
                  &row.busbw_mbs, &row.wrong, &consumed) != 5 ||
      static_cast<size_t>(consumed) != text.size() || row.from < 0 || row.to < 0 || row.busbw_mbs < 0) {
    return std::nullopt;
  }
  return row;
}

namespace {

std::string mbs(double v) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f MB/s", v);
  return text;
}

std::string link_name(const LinkRow& r) {
  return "rank " + std::to_string(r.from) + " -> rank " + std::to_string(r.to);
}

}  // namespace

std::vector<LinkFinding> judge_link_test(const std::vector<LinkRow>& rows) {
  std::vector<LinkFinding> findings;
  // A rank whose link in and link out both deliver wrong data corrupts what passes through it (its memory,
  // its own bus): one finding on that rank, not two on the links.
  std::map<int, size_t> wrong_into, wrong_out_of;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].wrong == 0) continue;
    wrong_into[rows[i].to] = i;
    wrong_out_of[rows[i].from] = i;
  }
  std::vector<bool> through_rank(rows.size(), false);
  for (const auto& [rank, in_row] : wrong_into) {
    const auto out = wrong_out_of.find(rank);
    if (out == wrong_out_of.end() || out->second == in_row) continue;
    through_rank[in_row] = through_rank[out->second] = true;
    findings.push_back({LinkFinding::Kind::kWrongRank, rank, in_row, "",
                        "both links through rank " + std::to_string(rank) + " deliver wrong data alone (" +
                            std::to_string(rows[in_row].wrong) + " in, " +
                            std::to_string(rows[out->second].wrong) +
                            " out): the rank corrupts what passes through it (its memory or its own path), "
                            "not one link"});
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].wrong == 0 || through_rank[i]) continue;
    findings.push_back(
        {LinkFinding::Kind::kWrongData, rows[i].to, i, "degraded_link",
         "the link " + link_name(rows[i]) + " alone delivered " + std::to_string(rows[i].wrong) +
             " wrong element(s): bit errors on the link into rank " + std::to_string(rows[i].to)});
  }
  // Slowness needs a table to compare against: three links at least.
  if (rows.size() < 3) return findings;
  std::vector<double> bw;
  for (const LinkRow& r : rows) bw.push_back(r.busbw_mbs);
  std::sort(bw.begin(), bw.end());
  const double median = bw[bw.size() / 2];
  std::vector<size_t> slow;
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i].busbw_mbs < kSlowLinkShare * median) slow.push_back(i);
  if (slow.empty() || slow.size() * 2 > rows.size()) return findings;  // most links slow: no outlier
  // A rank whose link in and link out are both slow: the path every one of its links takes.
  std::map<int, size_t> into, out_of;
  for (size_t i : slow) {
    into[rows[i].to] = i;
    out_of[rows[i].from] = i;
  }
  std::vector<bool> explained(rows.size(), false);
  for (const auto& [rank, in_row] : into) {
    const auto out = out_of.find(rank);
    if (out == out_of.end()) continue;
    explained[in_row] = explained[out->second] = true;
    findings.push_back({LinkFinding::Kind::kSlowRank, rank, in_row, "pcie",
                        "both links through rank " + std::to_string(rank) + " are slow alone (" +
                            mbs(rows[in_row].busbw_mbs) + " in, " + mbs(rows[out->second].busbw_mbs) +
                            " out, against a median of " + mbs(median) +
                            "): the rank's own path to the network, not one link"});
  }
  for (size_t i : slow) {
    if (explained[i]) continue;
    findings.push_back({LinkFinding::Kind::kSlowLink, rows[i].to, i, "degraded_link",
                        "the link " + link_name(rows[i]) + " alone runs at " + mbs(rows[i].busbw_mbs) +
                            " against a median of " + mbs(median) + ": a slow link into rank " +
                            std::to_string(rows[i].to)});
  }
  return findings;
}

}  // namespace ncclfi::diagnose
