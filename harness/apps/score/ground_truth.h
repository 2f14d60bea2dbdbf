// The ground truth that `ncclfi score` holds a diagnosis against: which ranks and hosts a run's faults
// hit, the site they model and the symptom the job showed. It comes from what the harness knows and the
// diagnosis never reads: a run's plan, its scenario's expectation and the injections that fired, or a
// lab's answer key.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ncclfi::score {

// The symptoms, in the words of the diagnosis (diagnosis.cc decide_symptom) plus the two it cannot
// give from logs: a job that only slowed, and one with nothing wrong.
inline constexpr const char* kSymptomNone = "none";
inline constexpr const char* kSymptomSlow = "slow with no error";

struct Truth {
  bool fault = false;   // a fault fired (false: a clean run, or a fault that never fired)
  std::set<int> ranks;  // the ranks it hit
  // False where the fault is in no rank (a lab's key whose answer has no ranks: a setting of the whole
  // job), so no rank is scored, as the lab's own grading counts none.
  bool ranks_scored = true;
  std::set<std::string> hosts;  // their hosts
  bool several_hosts = false;   // the job ran on more than one host: the host is worth scoring
  std::map<int, std::string> rank_hosts;
  std::string site;             // the site it models ("" where the plan's faults imply none)
  std::set<std::string> sites;  // the diagnosis's sites that count as right for it (site among them)
  std::string symptom;
  std::string source;     // what the truth was read from, for the report
  std::string workspace;  // a lab ticket's: the student's workspace its key names ("" for a run)
};

// The site a fault of `layer` and `kind` models, "" where it models none in particular (an API error
// code is a symptom, not a site). One table, with the reasons, in ground_truth.cc.
std::string site_of_fault(const std::string& layer, const std::string& kind);
// The site a lab's cause names (lab_grading.cc's vocabulary), "" for a cause that is not a site.
std::string site_of_lab_cause(const std::string& cause);
// The sites a diagnosis may name for the truth `site`: itself, and for a hung rank both hangs.
std::set<std::string> accepted_sites(const std::string& site);

// The truth of an ncclfi run directory (its plan.json, scenario.json and verdict.json). Throws
// std::runtime_error naming the file for a run directory without them.
Truth truth_of_run(const std::string& run_dir);
// The same from the documents themselves (a verdict not yet written: verdict_json(record)).
Truth truth_of_verdict(const nlohmann::json& plan, const nlohmann::json& verdict);
// The truth of a lab's key ticket (key.json beside runs/): the cause and ranks of its answer, the rest
// from its jobs' run directories.
Truth truth_of_lab_ticket(const std::string& ticket_dir);

}  // namespace ncclfi::score
