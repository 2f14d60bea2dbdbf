// The training labs of scenarios/labs/: one JSON file per lab (docs/labs.md). A lab names its course
// topic, what it needs, the symptom briefing, staged hints, the evidence, its variants, the jobs to run
// (scenario documents with {var:NAME} placeholders) and the answer key. A seed picks one variant.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ncclfi::cli::lab {

struct Lab {
  std::string file;
  nlohmann::json doc;  // as written
  std::string name, title, topic, needs, symptom;
  int difficulty = 1;
  size_t variant_count() const { return doc.at("variants").size(); }
};

// Every lab in `dir` (*.json), sorted by name. Throws std::runtime_error naming the file and the key for
// a lab that is not well formed (a missing key, an unknown cause, a job that is not a valid scenario).
std::vector<Lab> load_lab_catalogue(const std::string& dir);
const Lab* find_lab(const std::vector<Lab>& labs, const std::string& name);

// A student's seed when none is given: a stable hash of the name, so each student keeps one variant.
uint64_t seed_for_student(const std::string& student);
// The variant a seed picks (an index into "variants").
size_t pick_variant(const Lab& lab, uint64_t seed);

// `doc` with every {var:NAME} replaced by the variant's value: a string that is exactly the placeholder
// becomes the value (a number stays a number), inside a longer string its text. Throws for an unknown
// name.
nlohmann::json substitute_variant(const nlohmann::json& doc, const nlohmann::json& variant);

// The lab's parts for one variant, placeholders replaced.
struct LabVariant {
  size_t index = 0;
  nlohmann::json values;  // the variant object
  nlohmann::json jobs;    // [{name, scenario}]
  nlohmann::json answer;  // the key (lab_grading.h)
  nlohmann::json hints, evidence;
  std::string explanation;
};
LabVariant resolve_variant(const Lab& lab, size_t index);

}  // namespace ncclfi::cli::lab
