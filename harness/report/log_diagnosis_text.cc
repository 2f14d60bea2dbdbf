#include "log_diagnosis_text.h"

#include <cstdio>

#include "text_format.h"

namespace ncclfi::harness {

namespace {

std::string ranks_words(const std::vector<int>& ranks) {
  if (ranks.empty()) return "no rank";
  return (ranks.size() == 1 ? "rank " : "ranks ") + join(ranks, ",");
}

std::string agree_word(const std::optional<bool>& b) {
  if (!b) return "-";
  return *b ? "yes" : "no";
}

}  // namespace

std::string diagnosis_answer_text(const LogDiagnosis& d) {
  if (!d.failure) return "no failure in the logs";
  char confidence[32];
  std::snprintf(confidence, sizeof confidence, "%.2f", d.confidence);
  return ranks_words(d.ranks) + (d.host.empty() ? "" : " on " + d.host) + ", " +
         (d.site.empty() ? "no site" : d.site) + ", " + d.symptom + " (confidence " + confidence + ")";
}

std::string diagnosis_truth_text(const LogDiagnosis& d) {
  if (d.truth_ranks.empty() && d.truth_site.empty()) return "no fault fired";
  return ranks_words(d.truth_ranks) + ", " + (d.truth_site.empty() ? "no site in particular" : d.truth_site) +
         ", " + d.truth_symptom;
}

std::string diagnosis_agreement_text(const LogDiagnosis& d) {
  std::vector<std::string> wrong;
  bool compared = false;
  for (const auto& [agrees, what] :
       {std::pair{d.ranks_agree, "the ranks"}, std::pair{d.site_agrees, "the site"},
        std::pair{d.symptom_agrees, "the symptom"}}) {
    if (!agrees) continue;
    compared = true;
    if (!*agrees) wrong.push_back(what);
  }
  if (!compared) return "";
  if (wrong.empty()) return "agrees";
  std::string text = "disagrees on ";
  for (size_t i = 0; i < wrong.size(); ++i)
    text += (i == 0 ? "" : i + 1 == wrong.size() ? " and " : ", ") + wrong[i];
  return text;
}

std::vector<std::vector<std::string>> diagnosis_rows(const LogDiagnosis& d) {
  return {
      {"ranks", d.failure ? ranks_words(d.ranks) : "-", ranks_words(d.truth_ranks),
       agree_word(d.ranks_agree)},
      {"site", d.failure ? d.site : "-", d.truth_site.empty() ? "-" : d.truth_site,
       agree_word(d.site_agrees)},
      {"symptom", d.failure ? d.symptom : "none", d.truth_symptom, agree_word(d.symptom_agrees)},
  };
}

}  // namespace ncclfi::harness
