// The list of mechanisms (mechanism_list.h), and what the rest of ncclfi asks of it.
#include <algorithm>
#include <string>

#include "mechanism_list.h"

namespace ncclfi::harness {

const std::vector<const MechanismSpec*>& mechanism_specs() {
#define NCCLFI_ADDRESS(spec) &spec,
  static const std::vector<const MechanismSpec*> specs = {NCCLFI_MECHANISMS(NCCLFI_ADDRESS)};
#undef NCCLFI_ADDRESS
  return specs;
}

const MechanismSpec* find_mechanism(std::string_view name) {
  for (const MechanismSpec* spec : mechanism_specs()) {
    if (spec->name == name) return spec;
  }
  return nullptr;
}

const std::vector<std::string>& known_mechanisms() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const MechanismSpec* spec : mechanism_specs()) out.emplace_back(spec->name);
    return out;
  }();
  return names;
}

bool is_known_mechanism(std::string_view name) {
  return find_mechanism(name) != nullptr;
}

std::string mechanism_for_exit_code(int code) {
  for (const MechanismSpec* spec : mechanism_specs()) {
    if (spec->exit_code == code) return std::string(spec->name);
  }
  return "";
}

std::string mechanism_catalogue_markdown() {
  std::string out =
      "| mechanism | what noticed the fault | source | events that produce it | exit code | output lines "
      "that "
      "produce it (line id) |\n| --- | --- | --- | --- | --- | --- |\n";
  for (const MechanismSpec* spec : mechanism_specs()) {
    std::string lines;
    for (const SignatureLine& line : spec->lines) {
      lines += (lines.empty() ? "" : "; ") + std::string(line.shown) + " (`" + std::string(line.id) + "`)";
    }
    out += "| `" + std::string(spec->name) + "` | " + std::string(spec->noticed_by) + " | " +
           std::string(spec->source) + " | " + (spec->events.empty() ? "none" : std::string(spec->events)) +
           " | " + (spec->exit_code ? std::to_string(*spec->exit_code) : "none") + " | " +
           (lines.empty() ? "none" : lines) + " |\n";
  }
  return out;
}

nlohmann::json mechanism_catalogue_json() {
  nlohmann::json out = nlohmann::json::array();
  for (const MechanismSpec* spec : mechanism_specs()) {
    nlohmann::json lines = nlohmann::json::array();
    for (const SignatureLine& line : spec->lines) {
      lines.push_back({{"id", line.id}, {"regex", line.regex}, {"example", line.example}});
    }
    out.push_back({{"name", spec->name},
                   {"noticed_by", spec->noticed_by},
                   {"source", spec->source},
                   {"events", spec->events},
                   {"exit_code", spec->exit_code ? nlohmann::json(*spec->exit_code) : nlohmann::json()},
                   {"lines", lines},
                   {"doc", "docs/" + std::string(spec->doc)}});
  }
  return out;
}

}  // namespace ncclfi::harness
