// The catalogue of fault kinds per layer and their parameters. One place: the plan parser validates
// against it, `ncclfi list faults` prints it, and the front ends name kinds from it.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ncclfi/plan.h"

namespace ncclfi {

enum class ParamType {
  kNonNegInt,
  kPositiveInt,
  kNonNegNumber,
  kPositiveNumber,
  kString,
  kIntOrString,
  kBool
};

struct ParamSpec {
  std::string_view name;
  ParamType type;
  bool required;
  std::string_view help;
  std::span<const std::string_view> choices = {};  // for kString: the allowed values (empty = any)
};

struct FaultKindSpec {
  Layer layer;
  std::string_view kind;
  std::string_view effect;  // one line: what happens
  std::span<const ParamSpec> params;
  std::span<const std::string_view> points;  // the point names this kind can fire at
};

std::span<const FaultKindSpec> fault_kinds();
const FaultKindSpec* find_fault_kind(Layer layer, std::string_view kind);

// The point names a fault attaches to: from its target's ops when given (api: allreduce ->
// nccl/coll/allreduce, send -> nccl/p2p/send; net: isend -> net/isend), else its kind's default points.
std::vector<std::string> points_for_fault(const Fault& fault);
// The point an op name maps to on a layer (api "send" -> "nccl/p2p/send"), or nullopt for an unknown op.
std::optional<std::string> point_for_op(Layer layer, std::string_view op);

// Every compiled-in point name (nccl/coll/allreduce, net/isend, proc/stop, ...).
std::span<const std::string_view> all_point_names();

}  // namespace ncclfi
