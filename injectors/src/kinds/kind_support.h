// What a fault kind file needs: the point lists several kinds share and ParamReader, through which a
// kind reads its validated parameters (absent ones get the default its ParamSpec declares).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "ncclfi/fault_kinds.h"
#include "plan_json.h"

namespace ncclfi::kinds {

// api: the collectives and point-to-point calls, then the outermost ncclGroupEnd, then comm creation.
inline constexpr std::string_view kApiOps[] = {
    "nccl/coll/allreduce", "nccl/coll/allgather", "nccl/coll/reducescatter", "nccl/coll/reduce",
    "nccl/coll/broadcast", "nccl/coll/alltoall",  "nccl/coll/gather",        "nccl/coll/scatter",
    "nccl/p2p/send",       "nccl/p2p/recv"};
inline constexpr std::string_view kApiOpsAndGroupEnd[] = {
    "nccl/coll/allreduce", "nccl/coll/allgather", "nccl/coll/reducescatter", "nccl/coll/reduce",
    "nccl/coll/broadcast", "nccl/coll/alltoall",  "nccl/coll/gather",        "nccl/coll/scatter",
    "nccl/p2p/send",       "nccl/p2p/recv",       "nccl/group/end"};
// The ops that write a receive buffer on some rank (send does not).
inline constexpr std::string_view kApiReceivingOps[] = {
    "nccl/coll/allreduce", "nccl/coll/allgather", "nccl/coll/reducescatter",
    "nccl/coll/reduce",    "nccl/coll/broadcast", "nccl/coll/alltoall",
    "nccl/coll/gather",    "nccl/coll/scatter",   "nccl/p2p/recv"};
inline constexpr std::string_view kApiInit[] = {"nccl/comm/init"};
inline constexpr std::string_view kNetPosts[] = {"net/isend", "net/irecv"};
inline constexpr std::string_view kNetConnects[] = {"net/connect", "net/accept"};
// verbs: completions are faulted where ibv_poll_cq reports them; the port where ibv_query_port reads it.
inline constexpr std::string_view kVerbsCompletions[] = {"verbs/poll_cq"};
inline constexpr std::string_view kVerbsQueryPort[] = {"verbs/query_port"};

}  // namespace ncclfi::kinds

namespace ncclfi {

// Reads the parameters of one fault, already validated against the kind's ParamSpecs
// (validate_params). Asking for a parameter the kind does not declare, or a value for one with
// neither a value nor a default, is a bug in the kind file: std::logic_error (the unit tests resolve
// every kind).
class ParamReader {
 public:
  ParamReader(const FaultKindSpec& kind, const nlohmann::json& params, const plan_json::Where& where);

  bool has(std::string_view name) const;  // written in the plan
  double number(std::string_view name) const;
  std::optional<double> optional_number(std::string_view name) const;
  uint64_t integer(std::string_view name) const;
  std::optional<uint64_t> optional_integer(std::string_view name) const;
  std::string choice(std::string_view name) const;
  NcclError code(std::string_view name) const;
  int signal(std::string_view name) const;
  int exit_code(std::string_view name) const;
  // Rejects the fault at parameter `name` (a combination the types alone cannot express).
  [[noreturn]] void fail(std::string_view name, const std::string& expected) const;

 private:
  const ParamSpec& spec(std::string_view name) const;
  // The value written in the plan, else the parsed default; nullptr when neither.
  const nlohmann::json* value(std::string_view name) const;
  const nlohmann::json& required_value(std::string_view name) const;

  const FaultKindSpec& kind_;
  const nlohmann::json& params_;
  const plan_json::Where& where_;
  mutable std::map<std::string, nlohmann::json, std::less<>> defaults_;
};

}  // namespace ncclfi

namespace ncclfi::kinds {

// Checks `params` against the kind's specs: known names, required ones present, each value of its
// type and in its range. Throws PlanError naming the parameter.
void validate_params(const FaultKindSpec& kind, const nlohmann::json& params, const plan_json::Where& where);

}  // namespace ncclfi::kinds
