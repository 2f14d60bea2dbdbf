// The injection channel: how the injectors tell the harness that a fault fired, on a path the ranks'
// own code cannot forge or erase (events.jsonl is a file every rank may write, so an `inject` line there
// is only what a rank says). Per attempt the harness listens on a Unix datagram socket in a private
// directory (0700) and draws a random key; it hands both to the ranks in NCCLFI_INJECT_SOCKET and
// NCCLFI_INJECT_KEY. Each injector process takes them at load, before the workload's code runs, and
// removes them from its environment (and wipes their text from the process's original environment
// block, which /proc/<pid>/environ shows), so the workload and its children never see them.
//
// One datagram per injection: "<seq> <mac> <record>", where seq counts the process's records from 1,
// record is the inject event itself as one JSON object (with seq in its record_seq field) and mac is the
// hex HMAC-SHA256, under the key, of "<seq>\n<record>". The event's line in events.jsonl carries the same
// pid, source and record_seq, which is how the harness pairs them.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ncclfi {

inline constexpr const char* kInjectSocketVar = "NCCLFI_INJECT_SOCKET";  // the harness's socket path
inline constexpr const char* kInjectKeyVar = "NCCLFI_INJECT_KEY";        // the attempt's key, in hex
// Set by the injector that took the channel, for the other injectors of the same process (the preload,
// the net shim and the verbs layer are separate libraries): "<pid>:<address of the process's channel>".
// Worthless in any other process: a child after exec has another pid and finds nothing.
inline constexpr const char* kInjectHandleVar = "NCCLFI_INJECT_HANDLE";
// The field of an inject event that holds its record's seq (the preload's `seq` is the op's number).
inline constexpr const char* kRecordSeqField = "record_seq";

// The hex HMAC-SHA256 of "<seq>\n<record>" under `key`.
std::string injection_mac(std::string_view key, uint64_t seq, std::string_view record);
// "<seq> <mac> <record>".
std::string encode_injection_datagram(std::string_view key, uint64_t seq, std::string_view record);

struct InjectionDatagram {
  uint64_t seq = 0;
  std::string record;  // the JSON text, not yet parsed
};
// The datagram's seq and record when its MAC is right under `key`; nullopt for anything else (a
// malformed or forged datagram).
std::optional<InjectionDatagram> decode_injection_datagram(std::string_view key, std::string_view datagram);

// The process's end of the channel: shared by every injector library loaded in it.
class InjectionChannel {
 public:
  // The channel this process took at load, or nullptr when the harness gave none (a run outside
  // ncclfi, node agents, a test).
  static InjectionChannel* process();

  // The next sequence number of this process (1, 2, ...).
  uint64_t next_seq() { return seq_.fetch_add(1, std::memory_order_relaxed) + 1; }
  // Sends one record. False when it could not be sent within a second (the harness then finds the
  // record missing and judges the run unknown).
  bool send(uint64_t seq, std::string_view record) const;

  // Takes the channel from the environment (or, when another library of this process took it already,
  // that one's). Runs from each injector library's constructor; harmless to call again.
  static InjectionChannel* take_from_environment();

 private:
  InjectionChannel(int fd, std::string key) : fd_(fd), key_(std::move(key)) {}
  int fd_;  // a datagram socket connected to the harness's, close-on-exec
  std::string key_;
  std::atomic<uint64_t> seq_{0};
};

}  // namespace ncclfi
