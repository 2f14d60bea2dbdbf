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
#include "ncclfi/fault_points.h"
#include "plan_json.h"

namespace ncclfi::kinds {

// The point lists several kinds share, built from the one table of point names (ncclfi/fault_points.h).
// api: the collectives and point-to-point calls, then the outermost ncclGroupEnd, then comm creation.
inline constexpr std::string_view kApiOps[] = {
    points::kAllreduce, points::kAllgather, points::kReduceScatter, points::kReduce, points::kBroadcast,
    points::kAlltoall,  points::kGather,    points::kScatter,       points::kSend,   points::kRecv};
inline constexpr std::string_view kApiOpsAndGroupEnd[] = {
    points::kAllreduce, points::kAllgather, points::kReduceScatter, points::kReduce,
    points::kBroadcast, points::kAlltoall,  points::kGather,        points::kScatter,
    points::kSend,      points::kRecv,      points::kGroupEnd};
// The ops that write a receive buffer on some rank (send does not).
inline constexpr std::string_view kApiReceivingOps[] = {
    points::kAllreduce, points::kAllgather, points::kReduceScatter, points::kReduce, points::kBroadcast,
    points::kAlltoall,  points::kGather,    points::kScatter,       points::kRecv};
inline constexpr std::string_view kApiInit[] = {points::kCommInit};
// hang also reaches ncclCommAbort: the thread that tears a comm down (PyTorch's watchdog) stuck there.
inline constexpr std::string_view kApiOpsGroupEndAndAbort[] = {
    points::kAllreduce, points::kAllgather, points::kReduceScatter, points::kReduce,
    points::kBroadcast, points::kAlltoall,  points::kGather,        points::kScatter,
    points::kSend,      points::kRecv,      points::kGroupEnd,      points::kCommAbort};
inline constexpr std::string_view kNetPosts[] = {points::kNetIsend, points::kNetIrecv};
inline constexpr std::string_view kNetConnects[] = {points::kNetConnect, points::kNetAccept};
// verbs: completions are faulted where ibv_poll_cq reports them; the port where ibv_query_port reads it.
inline constexpr std::string_view kVerbsCompletions[] = {points::kVerbsPollCq};
inline constexpr std::string_view kVerbsQueryPort[] = {points::kVerbsQueryPort};

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

// The shared resolve helpers: kinds that differ only in their layer, points or wording declare a spec
// with one of these and have no code of their own.

// hang, init_hang, gpu_hang: one parameter `ms`, absent or 0 meaning for ever.
inline constexpr ParamSpec kHangMsParams[] = {{.name = "ms",
                                               .type = ParamType::kNonNegNumber,
                                               .absent = "for ever (so does 0)",
                                               .meaning = "how long the call blocks"}};
inline constexpr ParamSpec kGpuHangMsParams[] = {{.name = "ms",
                                                  .type = ParamType::kNonNegNumber,
                                                  .absent = "for ever (so does 0)",
                                                  .meaning = "how long the op's stream waits before the op"}};

// `Hold` (Hang or GpuHang) for `ms`, or for ever when it is absent or 0.
template <typename Hold>
FaultAction resolve_hang(const ParamReader& p) {
  const std::optional<double> ms = p.optional_number("ms");
  return ApiAction{Hold{ms && *ms > 0 ? ms : std::nullopt}};
}

// error, init_fail, connect_fail: one parameter `code`, the ncclResult_t returned, with its default.
inline constexpr ParamSpec kCodeParamsSystemError[] = {{.name = "code",
                                                        .type = ParamType::kNcclError,
                                                        .default_json = R"("ncclSystemError")",
                                                        .meaning = "the ncclResult_t returned"}};
inline constexpr ParamSpec kCodeParamsInternalError[] = {{.name = "code",
                                                          .type = ParamType::kNcclError,
                                                          .default_json = R"("ncclInternalError")",
                                                          .meaning = "the ncclResult_t returned"}};

// The layer's action (ApiAction, NetAction) holding `Effect` (FailWithCode, ConnectFail) with the code.
template <typename LayerAction, typename Effect>
FaultAction resolve_code(const ParamReader& p) {
  Effect effect{};  // the other members (async_error's warn) keep their defaults
  effect.code = p.code("code");
  return LayerAction{effect};
}

// Checks `params` against the kind's specs: known names, required ones present, each value of its
// type and in its range. Throws PlanError naming the parameter.
void validate_params(const FaultKindSpec& kind, const nlohmann::json& params, const plan_json::Where& where);

// net delay, verbs delay: each hit completion held `ms`, plus a seeded draw of up to `jitter_ms`.
inline constexpr ParamSpec kCompletionDelayParams[] = {
    {.name = "ms",
     .type = ParamType::kNonNegNumber,
     .required = true,
     .meaning = "how long each hit completion is held, in ms"},
    {.name = "jitter_ms",
     .type = ParamType::kNonNegNumber,
     .default_json = R"(0)",
     .meaning = "a seeded uniform draw in [0, jitter_ms] ms added on top"}};

// The layer's action (NetAction, VerbsAction) holding a Delay of `ms` plus jitter.
template <typename LayerAction>
FaultAction resolve_completion_delay(const ParamReader& p) {
  return LayerAction{Delay{p.number("ms"), p.number("jitter_ms")}};
}

// link loss, link corrupt: netem drops or corrupts this share of the host's packets.
inline constexpr ParamSpec kLinkPercentParams[] = {{.name = "percent",
                                                    .type = ParamType::kPositiveNumber,
                                                    .required = true,
                                                    .meaning = "of the packets, up to 100"}};

// A netem fault of kind `what` on `percent` of the packets (a share: at most 100).
template <Netem::What what>
FaultAction resolve_link_percent(const ParamReader& p) {
  const double percent = p.number("percent");
  if (percent > 100) p.fail("percent", "a share of packets from 0 to 100");
  return LinkAction{Netem{what, percent, 0}};
}

}  // namespace ncclfi::kinds
