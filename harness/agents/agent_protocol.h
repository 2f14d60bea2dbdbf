// The wire between the harness and its node agents (docs/multihost.md): one JSON object per line over
// TCP, each line at most kMaxAgentLineBytes, both sides authenticated by HMAC-SHA256 over the other's
// random challenge with the drill's secret. The secret travels in the launcher's environment
// (kAgentSecretVar), never on a command line, and never to the ranks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent_env.h"
#include "agent_seal.h"

namespace ncclfi::cli {

// An event line plus its envelope: an event line is at most 64 KiB (harness::kMaxEventLineBytes).
inline constexpr size_t kMaxAgentLineBytes = (64 << 10) + 1024;
// How long either side waits for the other's half of the handshake: a silent stranger costs no more.
inline constexpr int kAgentHandshakeMs = 2000;

// A node agent's answer to a signal it was asked to send when its host refused it (agent_node.h's
// FaultGate: outside the drill's allow-list).
inline constexpr int kSignalRefused = -1;

// 32 random bytes as hex, from the kernel (the secret and the challenges).
std::string random_hex(size_t bytes = 32);
// HMAC-SHA256(secret, role "|" challenge "|" host) as hex: `role` is "agent" or "harness", so a
// reply cannot be reflected back as the other side's.
std::string agent_mac(const std::string& secret, const std::string& role, const std::string& challenge,
                      const std::string& host);
// Compares two MACs in constant time.
bool macs_equal(const std::string& a, const std::string& b);

// A message's field when it has the expected type, else the fallback. What a peer sends is read only
// through these: a stranger's {"t":5} or a hello whose host is an object reads as absent, never as the
// library's type_error that would end the attempt.
std::string text_field(const nlohmann::json& message, const char* key, const std::string& fallback = "");
int64_t int_field(const nlohmann::json& message, const char* key, int64_t fallback);
bool bool_field(const nlohmann::json& message, const char* key, bool fallback);

// Writes `text` and a newline to stderr in one write(2). An agent's stderr reaches the run's agents.log
// through its launcher, and mpirun tags every chunk it reads ("[1,2]<stderr>:"): a line that std::cerr
// wrote in pieces arrived cut in two with a tag in its middle.
void agent_log_line(const std::string& text);

// A connected socket read and written as lines, with bounded buffers.
class LineChannel {
 public:
  explicit LineChannel(int fd = -1) : fd_(fd) {}
  LineChannel(LineChannel&& o) noexcept;
  LineChannel& operator=(LineChannel&& o) noexcept;
  LineChannel(const LineChannel&) = delete;
  ~LineChannel();

  int fd() const { return fd_; }
  bool open() const { return fd_ >= 0; }
  void close();
  // From now on every message sent is sealed and every message received must be (agent_seal.h).
  void seal_with(MessageSeal seal) { seal_ = std::move(seal); }
  // Sends one JSON object as a line (blocking, with a bound: 2 s unless given); false when the peer is
  // gone or took none of it for that long.
  bool send(const nlohmann::json& message, int bound_ms = 2000);
  // Reads what is there (waiting at most `wait_ms`); false when the peer closed or sent a line over
  // the limit. Complete lines are then taken with next().
  bool pump(int wait_ms);
  // The next complete line parsed as an object, or nullopt (none yet, or not a JSON object: dropped).
  // Once sealed, a message whose seal does not hold is dropped too and its reason kept for
  // take_seal_failures().
  std::optional<nlohmann::json> next();
  // Waits up to `wait_ms` for one message.
  std::optional<nlohmann::json> receive(int wait_ms);
  // Lines next() dropped because they were not JSON objects.
  size_t dropped_lines() const { return dropped_lines_; }
  // Why each message next() dropped for its seal since the last call (the first kMaxSealFailuresKept;
  // all of them are counted in sealed_dropped()).
  std::vector<SealCheck> take_seal_failures() { return std::exchange(seal_failures_, {}); }
  size_t sealed_dropped() const { return sealed_dropped_; }
  static constexpr size_t kMaxSealFailuresKept = 64;

 private:
  int fd_ = -1;
  std::string buffer_;
  size_t dropped_lines_ = 0;
  std::optional<MessageSeal> seal_;
  std::vector<SealCheck> seal_failures_;
  size_t sealed_dropped_ = 0;
};

// Connects to "host:port" (IPv4 or IPv6, by name or address); -1 when it cannot.
int connect_to(const std::string& host_port, int timeout_ms);

}  // namespace ncclfi::cli
