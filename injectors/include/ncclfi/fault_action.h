// What a fault does, as a type: every fault kind resolves its parameters into one of these once, when
// the plan is parsed, and the front ends carry the action out. Each layer has its own variant, so a
// kind can only produce an action its front end knows, and each front end visits its variant with an
// exhaustive visitor (no generic case): a new action that a front end does not handle does not compile.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "ncclfi/nccl_results.h"

namespace ncclfi {

// std::visit with one lambda per alternative.
template <class... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
template <class... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;

enum class CorruptMode { kBitflip, kNan, kZero };
const char* to_string(CorruptMode mode);

// Shared by several layers.
struct Delay {  // hold the call (api) or its completion (net, verbs) for ms + a seeded draw in [0, jitter_ms]
  double ms = 0;
  double jitter_ms = 0;
  // The hold of one firing, in ms: ms plus jitter_ms times a draw in [0, 1) from (seed, fault id, firing)
  // alone, the same in every layer (effects.cc). `seed` is the fault's (ArmedFault::seed), `firing` its
  // 1-based firing (ArmedFault::last_firing_on_this_thread).
  double draw(uint64_t seed, std::string_view fault_id, uint64_t firing) const;
  friend bool operator==(const Delay&, const Delay&) = default;
};
struct FailWithCode {  // the call returns this code without doing its work
  NcclError code = NcclError::kInternalError;
  friend bool operator==(const FailWithCode&, const FailWithCode&) = default;
};

// api layer (the preload).
struct Hang {  // the calling thread blocks for ms, then the call goes on; nullopt: for ever
  std::optional<double> ms;
  friend bool operator==(const Hang&, const Hang&) = default;
};
struct GpuHang {  // the call goes on, but the op's stream waits for ms first; nullopt: for ever
  std::optional<double> ms;
  friend bool operator==(const GpuHang&, const GpuHang&) = default;
};
struct Skip {  // the call returns ncclSuccess without reaching NCCL
  friend bool operator==(const Skip&, const Skip&) = default;
};
struct AsyncError {  // the call goes on; ncclCommGetAsyncError reports the code from then on
  NcclError code = NcclError::kRemoteError;
  std::string warn;  // when set, printed once as NCCL prints a WARN line (the real fault's own line)
  friend bool operator==(const AsyncError&, const AsyncError&) = default;
};
struct BandwidthCap {  // each op's stream is held until the op took bus_bytes / gb_per_s (nccl-tests busbw)
  double gb_per_s = 1;
  friend bool operator==(const BandwidthCap&, const BandwidthCap&) = default;
};
// At communicator creation, before NCCL reads its environment and topology: what the node looks like to
// NCCL changes for the rest of the process.
struct TopologyChange {
  bool p2p_off = false;           // NCCL_P2P_DISABLE=1: no NVLink/PCIe peer path, NCCL falls back to SHM
  std::optional<int> pcie_width;  // the GPU's PCIe link width in NCCL's topology (NCCL_TOPO_FILE)
  std::optional<std::string> pcie_speed;  // its speed, as sysfs writes it ("16.0 GT/s PCIe")
  friend bool operator==(const TopologyChange&, const TopologyChange&) = default;
};
struct RefuseConnect {    // connect() to the bootstrap fails with this errno: nothing listens, or no route
  int errno_value = 111;  // ECONNREFUSED
  friend bool operator==(const RefuseConnect&, const RefuseConnect&) = default;
};
struct CorruptElements {  // `count` elements of the receive buffer altered after the op
  CorruptMode mode = CorruptMode::kBitflip;
  uint64_t count = 1;
  std::optional<uint64_t> seed;  // nullopt: the fault's trigger seed, else the plan's
  friend bool operator==(const CorruptElements&, const CorruptElements&) = default;
};
struct DieBySignal {  // the process dies by this signal (one of signals.h's accepted ones)
  int signal = 6;
  friend bool operator==(const DieBySignal&, const DieBySignal&) = default;
};
struct ExitWithCode {  // the process exits with this code (0-255)
  int code = 1;
  friend bool operator==(const ExitWithCode&, const ExitWithCode&) = default;
};

// net layer (the shim).
struct Drop {  // the request's completion is never reported
  friend bool operator==(const Drop&, const Drop&) = default;
};
struct CorruptBits {  // exactly `bits` distinct bits of the payload flip
  uint64_t bits = 1;
  std::optional<uint64_t> seed;
  friend bool operator==(const CorruptBits&, const CorruptBits&) = default;
};
struct Throttle {  // the connection becomes a token bucket of this rate
  double gbps = 1;
  friend bool operator==(const Throttle&, const Throttle&) = default;
};
struct Stall {  // the connection reports no completion for ms
  double ms = 0;
  friend bool operator==(const Stall&, const Stall&) = default;
};
struct RetryExhausted {  // the NIC stops answering: each request fails with `code` after the IB retry budget
  NcclError code = NcclError::kRemoteError;
  friend bool operator==(const RetryExhausted&, const RetryExhausted&) = default;
};
struct ConnectFail {  // connect/accept return this code and no comm
  NcclError code = NcclError::kSystemError;
  friend bool operator==(const ConnectFail&, const ConnectFail&) = default;
};

// proc layer (the harness).
struct StopProcess {  // SIGSTOP, then SIGCONT after ms; nullopt: stopped until the attempt ends
  std::optional<double> resume_after_ms;
  friend bool operator==(const StopProcess&, const StopProcess&) = default;
};
struct KillProcess {  // the harness sends this signal (one of signals.h's accepted ones)
  int signal = 9;
  friend bool operator==(const KillProcess&, const KillProcess&) = default;
};

// verbs layer (libncclfi-ibverbs.so); Delay and Drop act on work completions there.
struct CompletionError {  // the completion comes back with this ibv_wc_status; the QP's later completions
                          // flush
  int status = 10;        // an ibv_wc_status value (ib_verbs_codes.h)
  uint32_t vendor_err = 0;
  // true: held until the IB retry budget (ib_retry_budget.h) has passed since the work request was posted,
  // as a NIC reports IBV_WC_RETRY_EXC_ERR only after its last retry timed out.
  bool after_retry_budget = false;
  friend bool operator==(const CompletionError&, const CompletionError&) = default;
};
struct PortDown {  // ibv_query_port reports the port IBV_PORT_DOWN from then on
  friend bool operator==(const PortDown&, const PortDown&) = default;
};
struct LinkDegrade {  // ibv_query_port reports these active_speed/active_width codes from then on; 0:
                      // unchanged
  int speed_code = 0;
  int width_code = 0;
  friend bool operator==(const LinkDegrade&, const LinkDegrade&) = default;
};
struct PostError {  // ibv_post_send/ibv_post_recv return this errno and post nothing
  int errno_value = 12;
  friend bool operator==(const PostError&, const PostError&) = default;
};

using ApiAction = std::variant<Delay, Hang, GpuHang, Skip, FailWithCode, AsyncError, CorruptElements,
                               DieBySignal, ExitWithCode, BandwidthCap, TopologyChange, RefuseConnect>;
using NetAction =
    std::variant<Delay, Throttle, Drop, CorruptBits, FailWithCode, Stall, ConnectFail, RetryExhausted>;
// link layer (the node agents, with the kernel's traffic control on the rank's host).
struct LimitRate {  // the host's link sends at most this rate (tbf: a token bucket of burst_kb)
  double mbit = 0;
  double burst_kb = 32;
  friend bool operator==(const LimitRate&, const LimitRate&) = default;
};
struct Netem {  // the host's link delays, loses or corrupts packets (the kernel's netem qdisc)
  enum class What { kDelay, kLoss, kCorrupt };
  What what = What::kDelay;
  double value = 0;   // delay: ms; loss and corrupt: percent of packets
  double jitter = 0;  // delay only: ms
  friend bool operator==(const Netem&, const Netem&) = default;
};

using ProcAction = std::variant<StopProcess, KillProcess>;
using LinkAction = std::variant<LimitRate, Netem>;
using VerbsAction = std::variant<Delay, Drop, CompletionError, PortDown, LinkDegrade, PostError>;
using FaultAction = std::variant<NetAction, ApiAction, ProcAction, LinkAction, VerbsAction>;

}  // namespace ncclfi
