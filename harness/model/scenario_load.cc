// Loading a scenario: JSON syntax, then the schema (unknown keys, wrong types), then the values the
// schema hands on (faults through ncclfi::parse_fault, mechanisms, regexes), then the cross-field rules.
#include <algorithm>
#include <set>
#include <sstream>

#include "drill_plan.h"
#include "launcher_spec.h"
#include "line_regex.h"
#include "mechanisms.h"
#include "ncclfi/bounded_input.h"
#include "scenario.h"
#include "scenario_params.h"
#include "scenario_rules.h"
#include "scenario_yaml.h"
#include "schema_check.h"

namespace ncclfi::cli {

using nlohmann::json;

namespace {

std::string join_problems(const std::string& file, const std::vector<ScenarioError::Problem>& problems) {
  std::string text;
  for (const auto& p : problems) {
    if (!text.empty()) text += "\n";
    // printable: a NUL in a key would end the message where it stands and hide the problems after it.
    text +=
        printable(file + (p.line > 0 ? ":" + std::to_string(p.line) : "") + ": " +
                  (p.pointer.empty() ? "/" : p.pointer) + ": expected " + p.expected + ", got " + p.found);
  }
  return text;
}

template <typename T>
T value_or(const json& obj, const char* key, T fallback) {
  return obj.contains(key) ? obj[key].get<T>() : fallback;
}

// Values the schema marks x-ncclfi: checked here because JSON Schema cannot say them.
void check_deferred(const json& doc, const std::string& file, const SchemaResult& schema,
                    std::vector<ScenarioError::Problem>& problems) {
  const auto& mechanisms = detection_mechanisms();
  for (const auto& d : schema.deferred) {
    const json& value = doc.at(json::json_pointer(d.pointer));
    if (d.kind == "fault") {
      try {
        (void)parse_fault(value, file, d.pointer);
      } catch (const PlanError& e) {
        problems.push_back({e.pointer(), e.expected(), e.found()});
      }
    } else if (d.kind == "mechanism") {
      const auto name = value.get<std::string>();
      if (std::find(mechanisms.begin(), mechanisms.end(), name) == mechanisms.end()) {
        std::string known;
        for (const auto& m : mechanisms) known += (known.empty() ? "" : ", ") + m;
        problems.push_back({d.pointer, "a detection mechanism (" + known + ")", describe_json(value)});
      }
    } else if (d.kind == "regex") {
      if (auto error = harness::LineRegex::check(value.get<std::string>())) {
        problems.push_back(
            {d.pointer, "a valid RE2 regular expression (" + *error + ")", describe_json(value)});
      }
    }
  }
}

void fill(Scenario& s, const json& doc) {
  s.doc = doc;
  s.name = doc["name"].get<std::string>();
  s.summary = doc["summary"].get<std::string>();
  s.tags = value_or(doc, "tags", std::vector<std::string>{});
  const json& w = doc["workload"];
  s.workload.builtin = value_or(w, "builtin", std::string{});
  s.workload.command = value_or(w, "command", std::vector<std::string>{});
  s.workload.ranks = w["ranks"].get<int>();
  s.workload.args = value_or(w, "args", std::vector<std::string>{});
  const json launcher = value_or(doc, "launcher", json::object());
  s.launcher.kind =
      value_or(launcher, "kind", std::string(default_launcher(s.workload.builtin.empty()).name));
  s.launcher.max_restarts = value_or(launcher, "max_restarts", 0);
  s.launcher.per_rank = value_or(launcher, "per_rank", true);
  s.launcher.extra_args = value_or(launcher, "extra_args", std::vector<std::string>{});
  s.launcher.nodes = value_or(launcher, "nodes", 0);
  s.launcher.node_launcher = value_or(launcher, "node_launcher", std::string{});
  s.launcher.node_launcher_args = value_or(launcher, "node_launcher_args", std::vector<std::string>{});
  s.launcher.hostnames = value_or(launcher, "hostnames", std::vector<std::string>{});
  s.env = value_or(doc, "env", std::map<std::string, std::string>{});
  s.net_wrap = value_or(doc, "net_wrap", std::string{});
  json plan_doc = {{"seed", value_or<uint64_t>(doc, "seed", 1)},
                   {"control", value_or(doc, "control", false)},
                   {"faults", value_or(doc, "faults", json::array())}};
  s.plan = parse_plan(plan_doc, s.file);
  const json limits = value_or(doc, "limits", json::object());
  if (limits.contains("max_faulted_ranks")) s.max_faulted_ranks = limits["max_faulted_ranks"].get<int>();
  if (limits.contains("max_faulted_hosts")) s.max_faulted_hosts = limits["max_faulted_hosts"].get<int>();
  for (const auto& layer : value_or(doc, "layers", std::vector<std::string>{})) {
    if (layer == "net") s.layer_net = true;
    if (layer == "api") s.layer_api = true;
    if (layer == "verbs") s.layer_verbs = true;
  }
  // The CPU ring's only transport is the net shim; the GPU workload needs the shim only for net faults.
  if (s.workload.builtin == "cpu-ring" || s.has_layer_faults(Layer::kNet)) s.layer_net = true;
  if (s.has_layer_faults(Layer::kApi)) s.layer_api = true;
  if (s.has_layer_faults(Layer::kVerbs)) s.layer_verbs = true;
  s.deadline_s = value_or(doc, "deadline_s", 60.0);
  s.grace_s = value_or(doc, "grace_s", 3.0);
  const json restart = value_or(doc, "restart", json::object());
  s.restart.max = value_or(restart, "max", 0);
  s.restart.faults_on_attempts = value_or(restart, "faults_on_attempts", std::vector<int>{0});
  s.restart.backoff_s = value_or(restart, "backoff_s", 0.5);
  s.probe_ras = value_or(doc, "probe_ras", false);
  if (doc.contains("baseline")) s.baseline = doc["baseline"].get<bool>();
  s.baseline_runs = value_or(doc, "baseline_runs", 2);
  s.log_patterns = value_or(doc, "log_patterns", json::array());
  s.expectation = harness::parse_expectation(doc["expect"], "/expect");
  const json requires_ = value_or(doc, "requires", json::object());
  s.required_gpus = value_or(requires_, "gpus", 0);
  s.needs_intra_node_paths = value_or(requires_, "intra_node_paths", false);
  s.required_env = value_or(requires_, "env", std::vector<std::string>{});
  s.required_commands = value_or(requires_, "commands", std::vector<std::string>{});
  s.required_nccl_symbols = value_or(requires_, "nccl_symbols", std::vector<std::string>{});
  // The schema's pattern says ">=MAJOR.MINOR[.PATCH]": the release is what follows ">=".
  s.required_nccl_version =
      value_or(requires_, "nccl_version", std::string()).substr(requires_.contains("nccl_version") ? 2 : 0);
  s.required_ib_ports = value_or(requires_, "ib_ports", 0);
}

}  // namespace

ScenarioError::ScenarioError(std::string file, std::vector<Problem> problems)
    : std::runtime_error(join_problems(file, problems)),
      file_(std::move(file)),
      problems_(std::move(problems)) {}

bool RestartPolicy::faults_on(int attempt) const {
  return std::find(faults_on_attempts.begin(), faults_on_attempts.end(), attempt) != faults_on_attempts.end();
}

bool Scenario::has_layer_faults(Layer layer) const {
  return std::any_of(plan.faults.begin(), plan.faults.end(),
                     [&](const Fault& f) { return f.layer == layer; });
}

bool Scenario::needs_baseline() const {
  if (baseline.has_value()) return *baseline;
  return expectation.needs_baseline();
}

std::string Scenario::expected_text() const {
  return harness::expected_summary(expectation);
}

const std::vector<std::string>& detection_mechanisms() {
  return harness::known_mechanisms();
}

Scenario scenario_from_json(const json& written, const std::string& file, const ParamOverrides& params) {
  // Named parameters first: the schema and every later check see the values they stand for.
  const json doc = apply_scenario_params(written, params, file);
  std::vector<ScenarioError::Problem> problems;
  const SchemaResult schema = check_against_schema(doc, scenario_schema());
  for (const auto& v : schema.violations) problems.push_back({v.pointer, v.expected, v.found});
  // The values the schema handed on are checked even when other places broke the schema, so that one
  // pass reports every error the file has up to the cross-field rules (which need a whole scenario).
  check_deferred(doc, file, schema, problems);
  if (!problems.empty()) throw ScenarioError(file, problems);
  Scenario s;
  s.file = file;
  try {
    fill(s, doc);
  } catch (const PlanError& e) {  // plan-wide rules (duplicate ids)
    throw ScenarioError(file, {{e.pointer(), e.expected(), e.found()}});
  }
  for (const auto& p : s.expectation.problems) problems.push_back({p.pointer, p.expected, p.found});
  check_scenario_rules(s, problems);
  check_blast_radius(s, {}, problems);
  if (!problems.empty()) throw ScenarioError(file, problems);
  s.warnings = scenario_warnings(s);
  return s;
}

namespace {

// The file's text, with the limits of bounded_input.h (a FIFO or a 200 MB file is a clear error).
std::string read_scenario_text(const std::string& path) {
  std::string text;
  if (const std::string problem = read_regular_file(path, kMaxInputFileBytes, text); !problem.empty())
    throw ScenarioError(path, {{"", "a readable scenario file", "a file that is " + problem}});
  return text;
}

json yaml_scenario_json(const std::string& text, const std::string& path, LineMap& lines) {
  try {
    return yaml_to_json(text, lines);
  } catch (const std::runtime_error& e) {
    throw ScenarioError(path, {{"", "valid YAML", std::string("a syntax error at ") + e.what()}});
  }
}

// A YAML scenario: converted to JSON, checked as one, and each problem given its line.
Scenario load_yaml_scenario(const std::string& text, const std::string& path, const ParamOverrides& params) {
  LineMap lines;
  const json doc = yaml_scenario_json(text, path, lines);
  try {
    return scenario_from_json(doc, path, params);
  } catch (const ScenarioError& e) {
    std::vector<ScenarioError::Problem> problems = e.problems();
    for (auto& p : problems) p.line = line_of(lines, p.pointer);
    throw ScenarioError(path, problems);
  }
}

}  // namespace

Scenario load_scenario(const std::string& path, const ParamOverrides& params) {
  const std::string text = read_scenario_text(path);
  if (is_yaml_path(path)) return load_yaml_scenario(text, path, params);
  return scenario_from_json(scenario_json_from_text(text, path), path, params);
}

json read_scenario_json(const std::string& path) {
  // Size, file type, nesting, duplicate keys and number range are checked before or while parsing
  // (bounded_input.h): a FIFO, a 200 MB file of '[' or a 1e400 is a clear error, not a hang or a crash.
  const std::string text = read_scenario_text(path);
  if (is_yaml_path(path)) {
    LineMap lines;
    return yaml_scenario_json(text, path, lines);
  }
  return scenario_json_from_text(text, path);
}

json scenario_json_from_text(std::string_view text, const std::string& file) {
  try {
    return parse_json_input(text);
  } catch (const JsonInputError& e) {
    throw ScenarioError(file, {{e.pointer(), e.expected(), e.found()}});
  }
}

Scenario scenario_from_text(std::string_view text, const std::string& file) {
  return scenario_from_json(scenario_json_from_text(text, file), file);
}

}  // namespace ncclfi::cli
