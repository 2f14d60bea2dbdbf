#include "cli_json.h"

#include "launcher_spec.h"
#include "ncclfi/fault_kinds.h"

namespace ncclfi::cli {
using nlohmann::json;

json scenario_json(const Scenario& s) {
  return {{"file", s.file},
          {"valid", true},
          {"kind", "scenario"},
          {"name", s.name},
          {"expected", s.expected_text()},
          {"summary", s.summary},
          {"tags", s.tags},
          {"warnings", s.warnings}};
}

json scenario_error_json(const ScenarioError& e) {
  json errors = json::array();
  for (const auto& p : e.problems()) {
    json error = {{"pointer", p.pointer}, {"expected", p.expected}, {"found", p.found}};
    if (p.line > 0) error["line"] = p.line;
    errors.push_back(std::move(error));
  }
  return {{"file", e.file()}, {"valid", false}, {"errors", errors}};
}

json fault_catalogue_json() {
  json kinds = json::array();
  for (const FaultKindSpec* k : fault_kinds()) {
    json params = json::array();
    for (const ParamSpec& p : k->params) {
      json choices = json::array();
      for (const auto c : p.choices) choices.push_back(std::string(c));
      params.push_back({{"name", std::string(p.name)},
                        {"type", std::string(param_type_name(p.type))},
                        {"required", p.required},
                        {"range", param_range(p)},
                        {"default", param_default(p)},
                        {"meaning", std::string(p.meaning)},
                        {"choices", choices}});
    }
    json points = json::array();
    for (const auto pt : k->points) points.push_back(std::string(pt));
    kinds.push_back({{"layer", to_string(k->layer)},
                     {"kind", std::string(k->kind)},
                     {"effect", std::string(k->effect)},
                     {"points", points},
                     {"params", params}});
  }
  return kinds;
}

json launcher_catalogue_json() {
  json launchers = json::array();
  for (const LauncherSpec* spec : launcher_specs()) {
    const char* reach = spec->reach == LauncherReach::kThisHost ? "this_host"
                        : spec->reach == LauncherReach::kNodes  ? "nodes"
                                                                : "through_node_launcher";
    launchers.push_back({{"name", spec->name},
                         {"summary", spec->summary},
                         {"workload", spec->workload == LauncherWorkload::kCommand ? "command" : "any"},
                         {"reach", reach},
                         {"restarts_workers", spec->restarts_workers},
                         {"per_rank_option", spec->per_rank_option}});
  }
  return launchers;
}

}  // namespace ncclfi::cli
