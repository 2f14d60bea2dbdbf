// `ncclfi score`: how often `ncclfi diagnose`, reading only a job's logs, names what really happened.
// Each case is a run directory of ncclfi or a lab's key ticket, whose ground truth (ground_truth.h) the
// diagnosis never sees; the score is the share of cases it got right for the rank, the host, the site,
// the symptom and the rank and site together, with a confusion matrix of the sites.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "diagnosis.h"
#include "ground_truth.h"
#include "run_record.h"

namespace ncclfi::score {

// What the diagnosis answered, in the terms of the truth.
struct Answer {
  bool failure = false;
  std::set<int> ranks;
  std::string host;
  std::string site;  // "" with no failure; "undecided" when sites tie at the top
  // The sites it names: the one, or those tied at the top. A tie is right only when every one of them is
  // a site the truth accepts (host_hang against gpu_hang, which logs cannot tell apart, for a hang).
  std::set<std::string> sites;
  std::string symptom;
  double confidence = 0;
};
Answer answer_of(const diagnose::Diagnosis& d);

struct ScoredCase {
  std::string name;  // the path as given
  std::string kind;  // "run" or "lab"
  Truth truth;
  Answer answer;
  // Right or wrong; nullopt where the truth gives nothing to score (a host on a one-host job, the site
  // of a fault that models none).
  std::optional<bool> rank, host, site, symptom, rank_and_site;
};
ScoredCase score_case(const std::string& name, const std::string& kind, const Truth& truth,
                      const diagnose::Diagnosis& d);

struct Accuracy {
  size_t right = 0, scored = 0;
  double ratio() const {
    return scored == 0 ? 0.0 : static_cast<double>(right) / static_cast<double>(scored);
  }
};

struct ScoreSummary {
  std::vector<ScoredCase> cases;
  std::vector<std::string> errors;  // inputs that could not be scored, with the reason
  Accuracy rank, host, site, symptom, rank_and_site;
  // truth site ("none" for a clean run, "(no site)" for a fault that models none) -> answered site
  // ("none" for no failure, "undecided" for a tie) -> cases.
  std::map<std::string, std::map<std::string, size_t>> confusion;
};
ScoreSummary summarise(std::vector<ScoredCase> cases, std::vector<std::string> errors);

// A case to score: a run directory or a lab ticket.
struct CaseInput {
  std::string path, kind;
};
// The cases under `paths`: a run directory, a scenario's directory of runs (its `latest`), a lab's key
// ticket (key.json beside runs/), or a directory holding any of those (an `--out` of `ncclfi run`, a
// lab key directory), searched three levels deep. Paths that hold none are listed in `errors`.
std::vector<CaseInput> find_cases(const std::vector<std::string>& paths, std::vector<std::string>& errors);

// Diagnoses and scores every case; an input that cannot be read becomes an error, never an exception.
ScoreSummary score_inputs(const std::vector<CaseInput>& inputs, std::vector<std::string> errors);

// The diagnosis of a judged run's logs beside its truth, for its verdict and reports (run_record.h); nullopt
// for a skipped run, or one whose plan or logs cannot be read.
std::optional<harness::LogDiagnosis> diagnose_beside_truth(const harness::RunRecord& record);

std::string score_text(const ScoreSummary& s);
nlohmann::json score_json(const ScoreSummary& s);

}  // namespace ncclfi::score
