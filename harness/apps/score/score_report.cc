// `ncclfi score`'s report: one row a case, the accuracies, the confusion matrix of the sites.
#include <cstdio>
#include <set>
#include <sstream>

#include "console_text.h"
#include "score.h"
#include "text_format.h"

namespace ncclfi::score {

namespace {

std::string ranks_or_dash(const std::set<int>& ranks) {
  return ranks.empty() ? "-" : harness::join(ranks, ",");
}

std::string mark(const std::optional<bool>& right) {
  if (!right) return " ";
  return *right ? "+" : "x";
}

std::string percent(const Accuracy& a) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%5.1f%% (%zu of %zu)", 100.0 * a.ratio(), a.right, a.scored);
  return a.scored == 0 ? "  n/a (none scored)" : buf;
}

nlohmann::json accuracy_json(const Accuracy& a) {
  return {{"right", a.right}, {"scored", a.scored}, {"accuracy", a.ratio()}};
}

nlohmann::json optional_json(const std::optional<bool>& b) {
  return b ? nlohmann::json(*b) : nlohmann::json();
}

}  // namespace

std::string score_text(const ScoreSummary& s) {
  std::ostringstream out;
  out << "ncclfi score: " << s.cases.size() << " case(s) diagnosed from their logs alone, held against the "
      << "ground truth (+ right, x wrong, blank not scored)\n\n";
  out << harness::pad("case", 44) << "  " << harness::pad("truth: ranks site / symptom", 44) << "  "
      << harness::pad("diagnosis: ranks site / symptom", 44) << "  rank host site symptom\n";
  for (const ScoredCase& c : s.cases) {
    const std::string truth = ranks_or_dash(c.truth.ranks) + " " +
                              (c.truth.site.empty() ? "-" : c.truth.site) + " / " + c.truth.symptom;
    // No failure: "none", unless a slow job's logs named where it was held back.
    const std::string answer = ranks_or_dash(c.answer.ranks) + " " +
                               (!c.answer.failure && c.answer.site.empty() ? "none" : c.answer.site) + " / " +
                               c.answer.symptom;
    out << harness::pad(harness::terminal_safe(c.name), 44) << "  " << harness::pad(truth, 44) << "  "
        << harness::pad(answer, 44) << "  " << mark(c.rank) << "    " << mark(c.host) << "    "
        << mark(c.site) << "    " << mark(c.symptom) << "\n";
  }
  out << "\nrank:          " << percent(s.rank) << "\nhost:          " << percent(s.host)
      << "\nsite:          " << percent(s.site) << "\nsymptom:       " << percent(s.symptom)
      << "\nrank and site: " << percent(s.rank_and_site) << "\n";
  out << "\nSites (rows: the truth; columns: the diagnosis; none = no failure found, undecided = a tie):\n";
  std::set<std::string> columns;
  for (const auto& [truth, answers] : s.confusion)
    for (const auto& [answer, n] : answers) columns.insert(answer);
  out << harness::pad("", 16);
  for (const auto& col : columns) out << " " << harness::pad(col, 13);
  out << "\n";
  for (const auto& [truth, answers] : s.confusion) {
    out << harness::pad(truth, 16);
    for (const auto& col : columns) {
      auto it = answers.find(col);
      out << " " << harness::pad(it == answers.end() ? "." : std::to_string(it->second), 13);
    }
    out << "\n";
  }
  if (!s.errors.empty()) {
    out << "\nNot scored:\n";
    for (const auto& e : s.errors) out << "  " << harness::terminal_safe(e) << "\n";
  }
  return out.str();
}

nlohmann::json score_json(const ScoreSummary& s) {
  nlohmann::json cases = nlohmann::json::array();
  for (const ScoredCase& c : s.cases) {
    cases.push_back({{"case", c.name},
                     {"kind", c.kind},
                     {"truth",
                      {{"fault", c.truth.fault},
                       {"ranks", c.truth.ranks},
                       {"hosts", c.truth.hosts},
                       {"site", c.truth.site},
                       {"symptom", c.truth.symptom},
                       {"source", c.truth.source}}},
                     {"diagnosis",
                      {{"failure", c.answer.failure},
                       {"ranks", c.answer.ranks},
                       {"host", c.answer.host},
                       {"site", c.answer.site},
                       {"symptom", c.answer.symptom},
                       {"confidence", c.answer.confidence}}},
                     {"right",
                      {{"rank", optional_json(c.rank)},
                       {"host", optional_json(c.host)},
                       {"site", optional_json(c.site)},
                       {"symptom", optional_json(c.symptom)},
                       {"rank_and_site", optional_json(c.rank_and_site)}}}});
  }
  return {{"cases", cases},
          {"accuracy",
           {{"rank", accuracy_json(s.rank)},
            {"host", accuracy_json(s.host)},
            {"site", accuracy_json(s.site)},
            {"symptom", accuracy_json(s.symptom)},
            {"rank_and_site", accuracy_json(s.rank_and_site)}}},
          {"confusion", s.confusion},
          {"errors", s.errors}};
}

}  // namespace ncclfi::score
