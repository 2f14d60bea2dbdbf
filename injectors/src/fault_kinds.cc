// The fault catalogue: kinds per layer, their parameters and the points they fire at.
#include "ncclfi/fault_kinds.h"

#include <array>
#include <stdexcept>

namespace ncclfi {
namespace {

using P = ParamSpec;
using T = ParamType;

constexpr std::string_view kCorruptModes[] = {"bitflip", "nan", "zero"};

constexpr ParamSpec kDelayParams[] = {
    P{"ms", T::kNonNegNumber, true, "how long each hit call or completion is held, in ms"},
    P{"jitter_ms", T::kNonNegNumber, false, "uniform jitter added on top, 0..jitter_ms"}};
constexpr ParamSpec kThrottleParams[] = {
    P{"gbps", T::kPositiveNumber, true, "token-bucket rate per connection, Gbit/s"}};
constexpr ParamSpec kNetCorruptParams[] = {
    P{"bits", T::kPositiveInt, false, "bits flipped in the received bytes (default 1)"},
    P{"seed", T::kNonNegInt, false, "which bits: same seed, same bits (default: the plan's seed)"}};
constexpr ParamSpec kErrorParams[] = {P{
    "code", T::kIntOrString, false, "ncclResult_t returned: a number 1-8 or a name such as ncclRemoteError"}};
constexpr ParamSpec kStallParams[] = {
    P{"ms", T::kPositiveNumber, true, "how long the connection makes no progress"}};
constexpr ParamSpec kHangParams[] = {
    P{"ms", T::kNonNegNumber, false, "how long the call blocks; absent or 0: for ever"}};
constexpr ParamSpec kApiCorruptParams[] = {
    P{"mode", T::kString, false, "bitflip (default), nan or zero", kCorruptModes},
    P{"count", T::kPositiveInt, false, "elements altered (default 1)"},
    P{"seed", T::kNonNegInt, false, "which elements/bits (default: the plan's seed)"}};
constexpr ParamSpec kCrashParams[] = {
    P{"signal", T::kIntOrString, false, "signal to die by (number or name such as SIGKILL); default SIGABRT"},
    P{"exit_code", T::kNonNegInt, false, "exit with this code instead of a signal"}};
constexpr ParamSpec kStopParams[] = {
    P{"ms", T::kNonNegNumber, false, "SIGCONT after this long; absent or 0: stopped for ever"}};
constexpr ParamSpec kKillParams[] = {P{"signal", T::kIntOrString, false, "signal sent (default SIGKILL)"}};

constexpr std::string_view kNetPostPoints[] = {"net/isend", "net/irecv"};
constexpr std::string_view kNetRecvPoints[] = {"net/irecv"};
constexpr std::string_view kNetErrorPoints[] = {"net/isend", "net/irecv", "net/test"};
constexpr std::string_view kNetConnectPoints[] = {"net/connect", "net/accept"};
constexpr std::string_view kApiOpPoints[] = {
    "nccl/coll/allreduce", "nccl/coll/allgather", "nccl/coll/reducescatter", "nccl/coll/reduce",
    "nccl/coll/broadcast", "nccl/coll/alltoall",  "nccl/coll/gather",        "nccl/coll/scatter",
    "nccl/p2p/send",       "nccl/p2p/recv"};
constexpr std::string_view kApiOpAndGroupPoints[] = {
    "nccl/coll/allreduce", "nccl/coll/allgather", "nccl/coll/reducescatter", "nccl/coll/reduce",
    "nccl/coll/broadcast", "nccl/coll/alltoall",  "nccl/coll/gather",        "nccl/coll/scatter",
    "nccl/p2p/send",       "nccl/p2p/recv",       "nccl/group/end"};
constexpr std::string_view kApiCollPoints[] = {
    "nccl/coll/allreduce", "nccl/coll/allgather", "nccl/coll/reducescatter",
    "nccl/coll/reduce",    "nccl/coll/broadcast", "nccl/coll/alltoall",
    "nccl/coll/gather",    "nccl/coll/scatter",   "nccl/p2p/recv"};
constexpr std::string_view kApiInitPoints[] = {"nccl/comm/init"};
constexpr std::string_view kProcStopPoints[] = {"proc/stop"};
constexpr std::string_view kProcKillPoints[] = {"proc/kill"};

constexpr FaultKindSpec kKinds[] = {
    {Layer::kNet, "delay", "completions are reported late", kDelayParams, kNetPostPoints},
    {Layer::kNet, "throttle", "token-bucket rate limit per connection", kThrottleParams, kNetPostPoints},
    {Layer::kNet,
     "drop",
     "a completion is never reported: the request stays pending for ever",
     {},
     kNetPostPoints},
    {Layer::kNet, "corrupt", "bits flipped in the received payload before completion", kNetCorruptParams,
     kNetRecvPoints},
    {Layer::kNet, "error", "isend/irecv/test returns an NCCL error", kErrorParams, kNetErrorPoints},
    {Layer::kNet, "connect_fail", "connect/accept fails", kErrorParams, kNetConnectPoints},
    {Layer::kNet, "stall", "the connection makes no progress for a window, then resumes", kStallParams,
     kNetPostPoints},
    {Layer::kApi, "delay", "the call is held before it reaches NCCL", kDelayParams, kApiOpAndGroupPoints},
    {Layer::kApi, "hang", "the calling thread blocks in the call (for ms, or for ever)", kHangParams,
     kApiOpAndGroupPoints},
    {Layer::kApi, "skip", "returns success without calling NCCL (peers hang)", {}, kApiOpPoints},
    {Layer::kApi, "error", "returns an NCCL error without calling NCCL", kErrorParams, kApiOpAndGroupPoints},
    {Layer::kApi, "async_error", "ncclCommGetAsyncError reports the code from then on", kErrorParams,
     kApiOpPoints},
    {Layer::kApi, "corrupt", "the receive buffer is altered on the op's stream after the op",
     kApiCorruptParams, kApiCollPoints},
    {Layer::kApi, "crash", "the process dies at that call", kCrashParams, kApiOpAndGroupPoints},
    {Layer::kApi, "init_fail", "communicator creation fails", kErrorParams, kApiInitPoints},
    {Layer::kApi, "init_hang", "communicator creation never returns (or after ms)", kHangParams,
     kApiInitPoints},
    {Layer::kProc, "stop", "SIGSTOP the rank, SIGCONT after ms (or never)", kStopParams, kProcStopPoints},
    {Layer::kProc, "kill", "the harness kills the rank", kKillParams, kProcKillPoints},
};

constexpr std::string_view kAllPoints[] = {"nccl/coll/allreduce",
                                           "nccl/coll/allgather",
                                           "nccl/coll/reducescatter",
                                           "nccl/coll/reduce",
                                           "nccl/coll/broadcast",
                                           "nccl/coll/alltoall",
                                           "nccl/coll/gather",
                                           "nccl/coll/scatter",
                                           "nccl/p2p/send",
                                           "nccl/p2p/recv",
                                           "nccl/group/end",
                                           "nccl/comm/init",
                                           "nccl/comm/async_error",
                                           "net/listen",
                                           "net/connect",
                                           "net/accept",
                                           "net/isend",
                                           "net/irecv",
                                           "net/test",
                                           "proc/stop",
                                           "proc/kill"};

}  // namespace

std::span<const FaultKindSpec> fault_kinds() {
  return kKinds;
}

const FaultKindSpec* find_fault_kind(Layer layer, std::string_view kind) {
  for (const auto& spec : kKinds) {
    if (spec.layer == layer && spec.kind == kind) return &spec;
  }
  return nullptr;
}

std::span<const std::string_view> all_point_names() {
  return kAllPoints;
}

std::optional<std::string> point_for_op(Layer layer, std::string_view op) {
  if (layer == Layer::kNet) {
    for (std::string_view known : {"listen", "connect", "accept", "isend", "irecv", "test"}) {
      if (op == known) return "net/" + std::string(op);
    }
    return std::nullopt;
  }
  if (layer == Layer::kApi) {
    if (op == "send" || op == "recv") return "nccl/p2p/" + std::string(op);
    if (op == "group_end") return std::string("nccl/group/end");
    if (op == "init") return std::string("nccl/comm/init");
    for (std::string_view known : {"allreduce", "allgather", "reducescatter", "reduce", "broadcast",
                                   "alltoall", "gather", "scatter"}) {
      if (op == known) return "nccl/coll/" + std::string(op);
    }
    return std::nullopt;
  }
  if (op == "stop" || op == "kill") return "proc/" + std::string(op);
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

}  // namespace ncclfi
