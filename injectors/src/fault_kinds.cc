// Lookups over the kind registry (ncclfi/fault_kind_list.h): kinds by name, points and ops, and the catalogue
// that `ncclfi list faults` prints and docs/faults.md contains.
#include "ncclfi/fault_kinds.h"

#include <algorithm>
#include <sstream>

#include "ncclfi/fault_points.h"
#include "ncclfi/nccl_results.h"
#include "ncclfi/signals.h"

namespace ncclfi {
namespace {

// The op name of a point: its last segment, except the group end and communicator creation.
std::string op_of_point(std::string_view point) {
  if (point == points::kGroupEnd) return "group_end";
  if (point == points::kCommInit) return "init";
  return std::string(point.substr(point.rfind('/') + 1));
}

std::vector<std::string_view> compute_point_names() {
  std::vector<std::string_view> names;
  for (const FaultKindSpec* kind : fault_kinds()) {
    for (auto point : kind->points) {
      if (std::find(names.begin(), names.end(), point) == names.end()) names.push_back(point);
    }
  }
  return names;
}

// A markdown table with padded columns, so it reads as well in a terminal as rendered.
std::string table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width(header.size(), 3);
  auto widen = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  };
  widen(header);
  for (const auto& row : rows) widen(row);
  std::ostringstream out;
  auto line = [&](const std::vector<std::string>& row) {
    out << "|";
    for (size_t i = 0; i < row.size(); ++i)
      out << " " << row[i] << std::string(width[i] - row[i].size(), ' ') << " |";
    out << "\n";
  };
  line(header);
  std::vector<std::string> rule;
  rule.reserve(width.size());
  for (size_t w : width) rule.emplace_back(w, '-');
  line(rule);
  for (const auto& row : rows) line(row);
  return out.str();
}

// nccl/coll/allreduce, nccl/coll/reduce, nccl/p2p/send -> "nccl/coll/{allreduce, reduce}, nccl/p2p/send".
std::string points_text(std::span<const std::string_view> points) {
  std::string text;
  for (size_t i = 0; i < points.size();) {
    const std::string_view prefix = points[i].substr(0, points[i].rfind('/') + 1);
    size_t j = i;
    while (j < points.size() && points[j].substr(0, points[j].rfind('/') + 1) == prefix) ++j;
    if (!text.empty()) text += ", ";
    if (j - i == 1) {
      text += points[i];
    } else {
      text += std::string(prefix) + "{";
      for (size_t k = i; k < j; ++k)
        text += (k == i ? "" : ", ") + std::string(points[k].substr(prefix.size()));
      text += "}";
    }
    i = j;
  }
  return text;
}

}  // namespace

const char* to_string(CorruptMode mode) {
  switch (mode) {
    case CorruptMode::kBitflip:
      return "bitflip";
    case CorruptMode::kNan:
      return "nan";
    case CorruptMode::kZero:
      return "zero";
  }
  return "?";
}

const FaultKindSpec* find_fault_kind(Layer layer, std::string_view kind) {
  for (const FaultKindSpec* spec : fault_kinds()) {
    if (spec->layer == layer && spec->kind == kind) return spec;
  }
  return nullptr;
}

const FaultKindSpec* find_fault_kind(std::string_view layer, std::string_view kind) {
  for (const FaultKindSpec* spec : fault_kinds()) {
    if (to_string(spec->layer) == layer && spec->kind == kind) return spec;
  }
  return nullptr;
}

std::span<const std::string_view> all_point_names() {
  static const std::vector<std::string_view> names = compute_point_names();
  return names;
}

std::vector<std::string> ops_of(Layer layer) {
  std::vector<std::string> ops;
  for (const FaultKindSpec* kind : fault_kinds()) {
    if (kind->layer != layer) continue;
    for (auto point : kind->points) {
      std::string op = op_of_point(point);
      if (std::find(ops.begin(), ops.end(), op) == ops.end()) ops.push_back(op);
    }
  }
  return ops;
}

std::optional<std::string> point_for_op(Layer layer, std::string_view op) {
  for (const FaultKindSpec* kind : fault_kinds()) {
    if (kind->layer != layer) continue;
    for (auto point : kind->points) {
      if (op_of_point(point) == op) return std::string(point);
    }
  }
  return std::nullopt;
}

std::vector<std::string> points_for_fault(const Fault& fault) {
  const FaultKindSpec* spec = find_fault_kind(fault.layer, fault.kind);
  if (spec == nullptr) return {};
  std::vector<std::string> points;
  if (fault.target.ops.empty()) {
    for (auto p : spec->points) points.emplace_back(p);
    return points;
  }
  for (const auto& op : fault.target.ops) {
    auto point = point_for_op(fault.layer, op);
    if (!point) continue;
    for (auto allowed : spec->points) {
      if (allowed == *point) points.push_back(*point);
    }
  }
  return points;
}

std::string_view param_type_name(ParamType type) {
  switch (type) {
    case ParamType::kNonNegInt:
    case ParamType::kPositiveInt:
    case ParamType::kExitCode:
      return "integer";
    case ParamType::kNonNegNumber:
    case ParamType::kPositiveNumber:
      return "number";
    case ParamType::kChoice:
      return "string";
    case ParamType::kNcclError:
      return "NCCL code (number or name)";
    case ParamType::kSignal:
      return "signal (number or name)";
  }
  return "?";
}

std::string param_range(const ParamSpec& spec) {
  switch (spec.type) {
    case ParamType::kNonNegInt:
    case ParamType::kNonNegNumber:
      return ">= 0";
    case ParamType::kPositiveInt:
      return ">= 1";
    case ParamType::kPositiveNumber:
      return "> 0";
    case ParamType::kExitCode:
      return "0-255";
    case ParamType::kChoice: {
      std::string list;
      for (auto c : spec.choices) list += (list.empty() ? "" : ", ") + std::string(c);
      return list;
    }
    case ParamType::kNcclError:
      return std::to_string(to_int(kNcclErrors[0].code)) + "-" +
             std::to_string(to_int(std::end(kNcclErrors)[-1].code)) + " (NCCL codes below)";
    case ParamType::kSignal:
      return "signals that end the process (below)";
  }
  return "?";
}

std::string param_default(const ParamSpec& spec) {
  if (spec.required) return "required";
  if (spec.default_json.empty()) return "absent: " + std::string(spec.absent);
  const nlohmann::json value = nlohmann::json::parse(spec.default_json);
  return value.is_string() ? value.get<std::string>() : value.dump();
}

std::string fault_catalogue_markdown() {
  std::vector<std::vector<std::string>> kinds, params;
  for (const FaultKindSpec* k : fault_kinds()) {
    std::string names;
    for (const auto& p : k->params) names += (names.empty() ? "" : ", ") + std::string(p.name);
    kinds.push_back(
        {to_string(k->layer), std::string(k->kind), names, std::string(k->effect), points_text(k->points)});
    for (const auto& p : k->params) {
      params.push_back({to_string(k->layer), std::string(k->kind), std::string(p.name),
                        std::string(param_type_name(p.type)), param_range(p), param_default(p),
                        std::string(p.meaning)});
    }
  }
  std::vector<std::vector<std::string>> codes;
  for (const auto& e : kNcclErrors)
    codes.push_back({std::to_string(to_int(e.code)), std::string(e.name), std::string(e.meaning)});
  std::vector<std::vector<std::string>> signals;
  for (const auto& s : fatal_signals())
    signals.push_back({std::to_string(s.number), std::string(s.name), std::string(s.action)});
  signals.push_back({std::to_string(realtime_min()) + "-" + std::to_string(realtime_max()),
                     "SIGRTMIN..SIGRTMAX (by number only)", "terminate"});
  std::vector<std::vector<std::string>> refused;
  for (const auto& r : refused_signals())
    refused.push_back({std::to_string(r.number), std::string(r.name), std::string(r.why)});

  std::ostringstream out;
  out << "### Kinds\n\n"
      << table({"layer", "kind", "params", "effect", "points"}, kinds) << "\n"
      << "### Parameters\n\n"
      << table({"layer", "kind", "param", "type", "range", "default", "meaning"}, params) << "\n"
      << "### NCCL codes (`code`)\n\n"
      << "A number or the name exactly as nccl.h spells it. Only errors: ncclSuccess and ncclInProgress "
         "inject "
         "no failure.\n\n"
      << table({"code", "name", "meaning"}, codes) << "\n"
      << "### Signals (`signal`)\n\n"
      << "A number, a name (`SIGKILL`) or a name without `SIG` (`KILL`). Only signals whose default action "
         "ends "
         "the process; the process dies by exactly that signal.\n\n"
      << table({"number", "name", "default action"}, signals) << "\n"
      << "Refused:\n\n"
      << table({"number", "name", "why"}, refused);
  return out.str();
}

}  // namespace ncclfi
