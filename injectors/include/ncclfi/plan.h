// The fault plan: what to inject, where and when. Parsed from JSON (the `faults` of a scenario, or a
// per-run plan.json written by the harness); see docs/faults.md for the format.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ncclfi/fault_action.h"

namespace ncclfi {

enum class Layer { kNet, kApi, kProc, kLink, kVerbs };
inline constexpr size_t kLayerCount = 5;  // per-layer tables (Injector::instance) are sized by it
enum class Direction { kAny, kSend, kRecv };

const char* to_string(Layer layer);
const char* to_string(Direction direction);

// Which calls a fault applies to. Empty/unset fields match everything.
struct Target {
  enum class RankSelect { kAll, kList, kRandom };
  RankSelect rank_select = RankSelect::kAll;
  std::vector<int> ranks;        // kList
  int random_count = 0;          // kRandom: how many ranks to pick
  uint64_t random_seed = 0;      // kRandom: same seed, same ranks
  std::vector<std::string> ops;  // api: allreduce, send, ...; net: isend, irecv, test, connect, ...
  std::optional<int> peer;       // net: the remote rank (NCCL passes ranks as tags)
  Direction direction = Direction::kAny;
  uint64_t min_bytes = 0;
  std::optional<int> comm;  // api: communicator creation index within the process
  // verbs: only the QPs (completions, posts) and port queries of this HCA and/or port (1-based), e.g. one
  // port of a dual-port NIC, so that NCCL's port failover has a healthy port to move to.
  std::optional<std::string> device;
  std::optional<int> port;

  // The ranks this target selects in a job of `world_size` ranks (resolves "random" deterministically).
  std::vector<int> resolve_ranks(int world_size) const;
  bool matches_rank(int rank, int world_size) const;
};

// When a fault fires, among the calls its target matches.
struct Trigger {
  uint64_t after_calls = 1;  // fire from the Nth matching call on (1 = the first)
  uint64_t after_ms = 0;     // ... and not before this long after the first matching call (proc: launch)
  double probability = 1.0;  // each eligible call fires with this probability, from a seeded hash
  uint64_t seed = 0;         // 0: the plan's seed
  uint64_t count = 1;        // firings at most; 0 = unlimited
  bool armed = true;         // false: waits for `ncclfi arm` at run time
  // Windows (fault_window.h): the first firing opens window 1; each window lasts duration_s (nullopt:
  // until the next one, or for ever), then the fault heals; window k opens (k-1) * every_s after the
  // first. `count` limits the firings of each window.
  std::optional<double> duration_s{};
  double every_s = 0;  // 0: one window
  uint64_t times = 1;  // windows
  bool windowed() const { return duration_s.has_value() || times > 1; }
};

struct Fault {
  std::string id;
  Layer layer = Layer::kApi;
  std::string kind;  // delay, hang, drop, ... (see fault_kinds.h)
  // The parameters as the plan wrote them: kept for to_json and reports only. What the fault does is
  // `action`, resolved from them once by the kind at parse time; the front ends read only that.
  nlohmann::json params = nlohmann::json::object();
  FaultAction action;
  Target target;
  Trigger trigger;

  // The action of this fault's layer; nullptr when the fault belongs to another layer.
  const ApiAction* api_action() const { return std::get_if<ApiAction>(&action); }
  const NetAction* net_action() const { return std::get_if<NetAction>(&action); }
  const ProcAction* proc_action() const { return std::get_if<ProcAction>(&action); }
  const LinkAction* link_action() const { return std::get_if<LinkAction>(&action); }
  const VerbsAction* verbs_action() const { return std::get_if<VerbsAction>(&action); }
};

struct FaultPlan {
  uint64_t seed = 1;
  bool control = false;  // open libfiu remote-control FIFOs for `ncclfi arm|disarm`
  std::vector<Fault> faults;
};

// A bad plan: where (file and JSON pointer), what was expected, what was found.
class PlanError : public std::runtime_error {
 public:
  PlanError(std::string file, std::string pointer, std::string expected, std::string found);
  const std::string& file() const { return file_; }
  const std::string& pointer() const { return pointer_; }
  const std::string& expected() const { return expected_; }
  const std::string& found() const { return found_; }

 private:
  std::string file_, pointer_, expected_, found_;
};

// Parses a plan document: {"seed": 1, "control": false, "faults": [...]}. `file` names the source in
// errors. `pointer_prefix` is prepended to JSON pointers (the harness passes "" for plan.json and the
// scenario's own document root when it validates a scenario's faults).
// Throws PlanError for unknown keys, wrong types, out-of-range values, unknown kinds for a layer,
// duplicate ids. Never crashes on any input.
FaultPlan parse_plan(const nlohmann::json& doc, const std::string& file);
// Parses one fault object; `pointer` is its JSON pointer (e.g. "/faults/0").
Fault parse_fault(const nlohmann::json& obj, const std::string& file, const std::string& pointer);
// Reads and parses a plan file (JSON syntax errors become PlanError with the byte offset).
FaultPlan load_plan_file(const std::string& path);
// Serialises a plan back to JSON (round-trips through parse_plan).
nlohmann::json to_json(const FaultPlan& plan);
nlohmann::json to_json(const Fault& fault);

// Describes a JSON value for error messages: `"ten"`, `-3`, `an object`, `null`.
std::string describe_json(const nlohmann::json& value);

}  // namespace ncclfi
