// The training labs of scenarios/labs/: one JSON file per lab (docs/labs-instructor.md). A lab is named
// by its symptom and has several causes; its title, briefing and symptom say only what an operator saw.
// Each cause has its own jobs (scenario documents with {var:NAME} placeholders), answer key, hints,
// evidence and explanation, a site (where the fault is) and a `draw`: for each placeholder, the values a
// seed may pick. A seed picks a cause, then one value of each drawn name: a variant.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ncclfi::cli::lab {

// The words a cause's "site" may be: where the fault is, for the score's truth and the workspace's
// per-node artefacts.
const std::vector<std::string>& lab_sites();

struct LabCause {
  std::string id;    // unique in its lab: `lab start --cause ID`
  std::string site;  // one of lab_sites()
  nlohmann::json doc;
  // Every combination of the cause's "draw" (names in sorted order, the last varying fastest).
  std::vector<nlohmann::json> value_sets;
};

struct Lab {
  std::string file;
  nlohmann::json doc;  // as written
  std::string name, title, topic, needs, symptom;
  int difficulty = 1;
  // How many ranks share a node ("ranks_per_node", default 1): ranks 0..k-1 run as the first node, the
  // next k as the second, ... (each a GPU and an HCA of its own there).
  int ranks_per_node = 1;
  std::vector<LabCause> causes;
  // Variants are numbered cause by cause: cause 0's value sets, then cause 1's, ...
  size_t variant_count() const;
  const LabCause* find_cause(const std::string& id) const;
};

// Every lab in `dir` (*.json), sorted by name. Throws std::runtime_error naming the file and the key for
// a lab that is not well formed (a missing key, an unknown cause or site, causes whose jobs differ in
// name, a drawn combination that is not a valid scenario).
std::vector<Lab> load_lab_catalogue(const std::string& dir);
const Lab* find_lab(const std::vector<Lab>& labs, const std::string& name);

// A secret seed from the system's random source (OpenSSL's RAND_bytes): what `lab start` uses when the
// instructor gives none. Nothing a student knows predicts it.
uint64_t random_seed();

// The variant a seed draws: a cause (or the one named), then one value of each drawn name. The same seed
// draws the same variant of the same catalogue; the lab's name is mixed in, so one seed draws unrelated
// variants in different labs. Throws for a cause the lab does not have.
size_t draw_variant(const Lab& lab, uint64_t seed, const std::optional<std::string>& cause_id = std::nullopt);

// `doc` with every {var:NAME} replaced by the variant's value: a string that is exactly the placeholder
// becomes the value (a number stays a number), inside a longer string its text. Throws for an unknown
// name.
nlohmann::json substitute_variant(const nlohmann::json& doc, const nlohmann::json& variant);

// The lab's parts for one variant, placeholders replaced.
struct LabVariant {
  size_t index = 0;
  std::string cause_id, site;
  nlohmann::json values;  // the drawn values
  nlohmann::json jobs;    // [{name, about, scenario}]
  nlohmann::json answer;  // the key (lab_grading.h)
  nlohmann::json hints, evidence;
  std::string explanation;
};
LabVariant resolve_variant(const Lab& lab, size_t index);

}  // namespace ncclfi::cli::lab
