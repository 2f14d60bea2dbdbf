// The registry of fault kinds. Each kind lives in its own file under injectors/src/kinds/ and declares
// its layer, name, effect, the points it fires at and its parameters, and resolves a fault's
// parameters into a typed action (fault_action.h). The plan parser validates against it, `ncclfi list
// faults` and docs/faults.md print it (fault_catalogue_markdown), and the front ends only see actions.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ncclfi/fault_action.h"
#include "ncclfi/plan.h"

namespace ncclfi {

enum class ParamType {
  kNonNegInt,       // an integer >= 0
  kPositiveInt,     // an integer >= 1
  kNonNegNumber,    // a number >= 0
  kPositiveNumber,  // a number > 0
  kChoice,          // one of `choices`
  kNcclError,       // an NCCL error code (nccl_results.h)
  kSignal,          // a signal that ends the process (signals.h)
  kExitCode,        // an integer 0-255
};

struct ParamSpec {
  std::string_view name;
  ParamType type;
  bool required = false;
  // The value used when the parameter is absent, as JSON ("0", "\"bitflip\""); the kinds read it
  // through ParamReader, so the documented default is the one applied. Empty: see `absent`.
  std::string_view default_json = {};
  std::string_view absent = {};  // what "absent" means when there is no default ("for ever")
  std::string_view meaning = {};
  std::span<const std::string_view> choices = {};  // kChoice
};

class ParamReader;

// What a fault does to the rank's own process, beyond the call it fires on.
enum class ProcessEffect {
  kNone,
  kStops,  // the process is stopped (proc stop): it does nothing until SIGCONT or the teardown
  kEnds,   // the process dies (api crash, proc kill): nothing can heal it
};

// What code outside the kind files needs to know about a kind. It asks these, never the kind's name, so a
// new kind with the same traits needs no change anywhere else.
struct KindTraits {
  ProcessEffect process = ProcessEffect::kNone;
  // The parameter that says how long one firing's effect lasts ("ms" of a hang, a delay, a stall, a stop);
  // empty when the kind has none.
  std::string_view duration_param = {};
  // A rate: one firing slows one call (or one connection), so a lasting slow-down (a straggler, a slow
  // link) needs trigger.count 0, every matching call. `ncclfi validate` warns when such a fault keeps the
  // default count of 1 under an expected `degraded`: the run would read clean.
  bool rate = false;
};

struct FaultKindSpec {
  Layer layer;
  std::string_view kind;
  std::string_view effect;                   // one line: what happens
  std::span<const std::string_view> points;  // the point names this kind can fire at (fault_points.h)
  std::span<const ParamSpec> params;
  // Builds the action from validated parameters (may reject a combination with reader.fail()).
  FaultAction (*resolve)(const ParamReader& reader);
  KindTraits traits = {};

  // The rank dies of this fault: its exit is the fault's effect, and no window can heal it.
  bool ends_process() const { return traits.process == ProcessEffect::kEnds; }
  // The rank dies or is stopped by this fault: its exit (or its teardown while stopped) is the fault
  // itself, not a detection of it.
  bool takes_rank_down() const { return traits.process != ProcessEffect::kNone; }
  // A parameter (traits.duration_param) says how long each firing's effect lasts.
  bool has_duration() const { return !traits.duration_param.empty(); }
};

std::span<const FaultKindSpec* const> fault_kinds();
const FaultKindSpec* find_fault_kind(Layer layer, std::string_view kind);
// The same, from a layer's name as plans and events write it ("api"); nullptr for an unknown one.
const FaultKindSpec* find_fault_kind(std::string_view layer, std::string_view kind);

// The point names a fault attaches to: from its target's ops when given (api: allreduce ->
// nccl/coll/allreduce, send -> nccl/p2p/send; net: isend -> net/isend), else its kind's default points.
std::vector<std::string> points_for_fault(const Fault& fault);
// The point an op name maps to on a layer (api "send" -> "nccl/p2p/send"), or nullopt for an op no
// kind of that layer can reach.
std::optional<std::string> point_for_op(Layer layer, std::string_view op);
// The op names of a layer that some kind can reach ("allreduce", ..., "init"; "connect", ...).
std::vector<std::string> ops_of(Layer layer);

// Every point some kind can fire at, in a fixed order (nccl/coll/allreduce, ..., net/isend, proc/stop).
std::span<const std::string_view> all_point_names();

// Parameter types, ranges and defaults as `ncclfi list faults` and docs/faults.md print them.
std::string_view param_type_name(ParamType type);
std::string param_range(const ParamSpec& spec);
std::string param_default(const ParamSpec& spec);

// The catalogue as markdown: the kinds, their parameters, the NCCL codes and the signals. `ncclfi list
// faults` prints it and docs/faults.md contains it verbatim (a unit test compares them).
std::string fault_catalogue_markdown();

}  // namespace ncclfi
