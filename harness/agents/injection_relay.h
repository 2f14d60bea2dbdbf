// The injection channel across hosts (ncclfi/injection_channel.h, docs/faults.md): ranks under node
// agents cannot reach the harness's socket, so each node's agent opens a channel of its own (the same
// InjectionReceiver the harness uses: a private socket and a fresh key per attempt), checks its ranks'
// datagrams against its key, and relays each authenticated record over its sealed link to the harness
// (agent_seal.h), which hands it to the attempt's InjectionLedger like a record of its own socket.
//
// How the ranks get the channel: the launcher, not the agent, starts each rank, as `ncclfi agent --exec
// -- PROGRAM` (agent_rank_exec.h). The agent leaves the socket's path and the key in a file (0600) in the
// channel's own directory, linked from its spool; each wrapper reads it there and, when the harness says the
// job has an injector (kInjectFromAgentVar, agent_env.h), puts both in its program's environment only, where
// the injector takes and wipes them as it does under the harness. They never reach a command line.
//
// On the wire, agent -> harness:
//   {"t":"inject_record","record_seq":N,"record":"<the inject event's JSON text>"}   one authenticated
//                                                record ("seq" and "mac" are the link's seal)
//   {"t":"inject_rejected","n":N}                N datagrams whose MAC or format was wrong on the node
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "injection_receiver.h"
#include "ncclfi/injection_channel.h"

namespace ncclfi::cli {

inline constexpr const char* kRelayedRecord = "inject_record";
inline constexpr const char* kRelayedRejections = "inject_rejected";

// A record the relay carries: an event line is at most 64 KiB, and the record travels as a JSON string
// inside a sealed line of at most kMaxAgentLineBytes (a quote or backslash doubles when escaped). An
// inject event is far smaller; a longer datagram is counted as rejected, never sent.
inline constexpr size_t kMaxRelayedRecordBytes = 32 << 10;

// A node agent's end: its channel, the file that hands it to the wrappers, and the relay.
class NodeInjectionRelay {
 public:
  // Opens the channel, writes its file and links it from `spool_dir` (which must exist). Throws
  // std::runtime_error saying what failed (then the node's ranks get no channel, and their injections
  // are judged forged: never a pass on a line alone).
  explicit NodeInjectionRelay(const std::string& spool_dir);
  ~NodeInjectionRelay();  // removes the link and the file; the receiver removes its own directory
  NodeInjectionRelay(const NodeInjectionRelay&) = delete;
  NodeInjectionRelay& operator=(const NodeInjectionRelay&) = delete;

  // Sends every record waiting on the socket, then the count of datagrams that failed authentication
  // (`send`: the agent's sealed link).
  void relay(const std::function<bool(const nlohmann::json&)>& send);

 private:
  InjectionReceiver receiver_;
  std::string handoff_path_;  // the link in the spool
  std::string channel_path_;  // the file it points to, beside the socket
};

// For `agent --exec`: NCCLFI_INJECT_SOCKET and NCCLFI_INJECT_KEY as the node's agent left them in
// `spool_dir`; empty when it left none (it could not open a channel).
std::map<std::string, std::string> node_injection_env(const std::string& spool_dir);

// For the hub: what a relayed message from the agent on `host` holds, every field type-checked (a peer's
// message of the wrong shape is counted as rejected, never trusted and never fatal). A node's key vouches
// for its own host's ranks only: a record that names another host is rejected too.
struct RelayedInjections {
  std::optional<InjectionDatagram> record;  // an inject_record with a seq >= 1 and a record of text
  size_t rejected = 0;                      // an inject_rejected's count, or 1 for a malformed record
};
RelayedInjections read_relayed(const nlohmann::json& message, const std::string& host);

}  // namespace ncclfi::cli
