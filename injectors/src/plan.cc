// Parsing and serialising fault plans. Every rejection names the file, the JSON pointer of the bad
// field, what was expected and what was found; no input crashes the parser (tests/fuzz).
#include "ncclfi/plan.h"

#include <set>

#include "kinds/kind_support.h"
#include "ncclfi/bounded_input.h"
#include "ncclfi/fault_kinds.h"
#include "plan_json.h"

namespace ncclfi {

using plan_json::Where;

namespace plan_detail {
Target parse_target(const nlohmann::json& v, const Where& w, Layer layer);
Trigger parse_trigger(const nlohmann::json& v, const Where& w);
nlohmann::json target_to_json(const Target& t);
nlohmann::json trigger_to_json(const Trigger& t);
}  // namespace plan_detail

const char* to_string(Layer layer) {
  switch (layer) {
    case Layer::kNet:
      return "net";
    case Layer::kApi:
      return "api";
    case Layer::kProc:
      return "proc";
    case Layer::kLink:
      return "link";
    case Layer::kVerbs:
      return "verbs";
  }
  return "?";
}

const char* to_string(Direction direction) {
  switch (direction) {
    case Direction::kAny:
      return "any";
    case Direction::kSend:
      return "send";
    case Direction::kRecv:
      return "recv";
  }
  return "?";
}

PlanError::PlanError(std::string file, std::string pointer, std::string expected, std::string found)
    : std::runtime_error(printable(file + ": " + pointer + ": expected " + expected + ", got " + found)),
      file_(std::move(file)),
      pointer_(std::move(pointer)),
      expected_(std::move(expected)),
      found_(std::move(found)) {}

std::string describe_json(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null:
      return "null";
    case nlohmann::json::value_t::object:
      return "an object";
    case nlohmann::json::value_t::array:
      return "an array";
    case nlohmann::json::value_t::discarded:
      return "nothing";
    default: {
      std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      if (text.size() > 80) text = text.substr(0, 77) + "...";
      return text;
    }
  }
}

namespace {

constexpr const char* kLayerNames = "one of \"net\", \"api\", \"proc\", \"link\", \"verbs\"";

Layer parse_layer(const nlohmann::json& v, const Where& w) {
  if (v == "net") return Layer::kNet;
  if (v == "api") return Layer::kApi;
  if (v == "proc") return Layer::kProc;
  if (v == "link") return Layer::kLink;
  if (v == "verbs") return Layer::kVerbs;
  w.fail(kLayerNames, v);
}

std::string kinds_of(Layer layer) {
  std::string list;
  for (const FaultKindSpec* spec : fault_kinds()) {
    if (spec->layer == layer) list += (list.empty() ? "" : ", ") + std::string(spec->kind);
  }
  return list;
}

bool valid_id(const std::string& id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
              c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

Fault parse_fault(const nlohmann::json& obj, const std::string& file, const std::string& pointer) {
  Where w{file, pointer};
  plan_json::require_object(obj, w, {"id", "layer", "kind", "params", "target", "trigger", "summary"});
  Fault f;
  if (!obj.contains("id")) w.at("id").fail_text("a fault id (letters, digits, _ - .)", "nothing");
  f.id = plan_json::read_string(obj["id"], w.at("id"));
  if (!valid_id(f.id)) w.at("id").fail("an id of 1-64 letters, digits, '_', '-' or '.'", obj["id"]);
  if (!obj.contains("layer")) w.at("layer").fail_text(kLayerNames, "nothing");
  f.layer = parse_layer(obj["layer"], w.at("layer"));
  if (!obj.contains("kind")) w.at("kind").fail_text("a fault kind", "nothing");
  f.kind = plan_json::read_string(obj["kind"], w.at("kind"));
  const FaultKindSpec* spec = find_fault_kind(f.layer, f.kind);
  if (spec == nullptr) {
    w.at("kind").fail(std::string("a ") + to_string(f.layer) + " fault kind (" + kinds_of(f.layer) + ")",
                      obj["kind"]);
  }
  if (obj.contains("summary")) plan_json::read_string(obj["summary"], w.at("summary"));
  if (obj.contains("params")) f.params = obj["params"];
  const Where wp = w.at("params");
  kinds::validate_params(*spec, f.params, wp);
  f.action = spec->resolve(ParamReader(*spec, f.params, wp));
  if (obj.contains("target")) f.target = plan_detail::parse_target(obj["target"], w.at("target"), f.layer);
  if (obj.contains("trigger")) f.trigger = plan_detail::parse_trigger(obj["trigger"], w.at("trigger"));
  if (f.trigger.duration_s && f.layer == Layer::kProc) {
    // The harness's window on a proc fault is the effect itself: a killed rank cannot heal, and a stop
    // whose parameter already says how long it lasts would say it twice.
    const std::string kind = std::string(to_string(f.layer)) + " " + f.kind;
    if (spec->ends_process()) {
      w.at("trigger")
          .at("duration_s")
          .fail("no duration for a " + kind + " (a killed rank cannot heal; every_s and times repeat it)",
                obj["trigger"]["duration_s"]);
    }
    if (spec->has_duration() && f.params.contains(spec->traits.duration_param)) {
      w.at("trigger")
          .at("duration_s")
          .fail("either params." + std::string(spec->traits.duration_param) +
                    " or trigger.duration_s for a " + kind + " (both say how long the rank is stopped)",
                obj["trigger"]["duration_s"]);
    }
    // The stop's window is its duration: SIGCONT when it closes.
    if (auto* proc = std::get_if<ProcAction>(&f.action)) {
      if (auto* stop = std::get_if<StopProcess>(proc)) stop->resume_after_ms = *f.trigger.duration_s * 1000;
    }
  }
  if (!f.target.ops.empty() && points_for_fault(f).empty()) {
    std::string list;
    for (auto p : spec->points) list += (list.empty() ? "" : ", ") + std::string(p);
    w.at("target").at("ops").fail(
        "ops that " + std::string(to_string(f.layer)) + " " + f.kind + " can hit (points: " + list + ")",
        obj["target"]["ops"]);
  }
  return f;
}

FaultPlan parse_plan(const nlohmann::json& doc, const std::string& file) {
  Where w{file, ""};
  plan_json::require_object(doc, w, {"version", "seed", "control", "faults"});
  FaultPlan plan;
  if (doc.contains("version")) {
    const auto& v = doc["version"];
    if (!(v.is_number_integer() && v.get<int64_t>() == 1)) w.at("version").fail("1", v);
  }
  if (doc.contains("seed")) plan.seed = plan_json::read_nonneg_int(doc["seed"], w.at("seed"));
  if (doc.contains("control")) plan.control = plan_json::read_bool(doc["control"], w.at("control"));
  if (!doc.contains("faults")) w.at("faults").fail_text("an array of faults", "nothing");
  const auto& faults = doc["faults"];
  if (!faults.is_array()) w.at("faults").fail("an array of faults", faults);
  std::set<std::string> ids;
  for (size_t i = 0; i < faults.size(); ++i) {
    Fault f = parse_fault(faults[i], file, w.at("faults").at(i).pointer);
    if (!ids.insert(f.id).second) {
      w.at("faults").at(i).at("id").fail("an id not used by another fault", faults[i]["id"]);
    }
    plan.faults.push_back(std::move(f));
  }
  return plan;
}

FaultPlan load_plan_file(const std::string& path) {
  // Every rank reads the plan before its first NCCL call: a FIFO must not block it and a huge file must
  // not cost it seconds and gigabytes (bounded_input.h).
  std::string text;
  if (const std::string problem = read_regular_file(path, kMaxInputFileBytes, text); !problem.empty())
    throw PlanError(path, "/", "a readable plan file", "a file that is " + problem);
  nlohmann::json doc;
  try {
    doc = parse_json_input(text);
  } catch (const JsonInputError& e) {
    throw PlanError(path, e.pointer().empty() ? "/" : e.pointer(), e.expected(), e.found());
  }
  return parse_plan(doc, path);
}

nlohmann::json to_json(const Fault& fault) {
  nlohmann::json j = {
      {"id", fault.id}, {"layer", to_string(fault.layer)}, {"kind", fault.kind}, {"params", fault.params}};
  j["target"] = plan_detail::target_to_json(fault.target);
  j["trigger"] = plan_detail::trigger_to_json(fault.trigger);
  return j;
}

nlohmann::json to_json(const FaultPlan& plan) {
  nlohmann::json faults = nlohmann::json::array();
  for (const auto& f : plan.faults) faults.push_back(to_json(f));
  return {{"version", 1}, {"seed", plan.seed}, {"control", plan.control}, {"faults", faults}};
}

}  // namespace ncclfi
