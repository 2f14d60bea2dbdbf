// What keeps the agents' wire honest after the handshake (docs/multihost.md): each side derives a key of
// the connection from the drill's secret and both challenges, and every later message, in both
// directions, carries a sequence number and a MAC over its direction, that number and its canonical
// body. A line injected into the connection (no MAC, or a MAC without the key), a genuine line sent
// again, or one out of order is dropped by its receiver, which says why.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace ncclfi::cli {

// What a seal adds to a message's line at most: ,"mac":"<64 hex digits>","seq":<up to 19 digits>. A
// message cut to fit the wire's line limit is cut to kMaxAgentLineBytes less this.
inline constexpr size_t kSealBytes = 128;

// The two directions a MAC is bound to: a message cannot be reflected back to its sender.
inline constexpr const char* kToAgent = "harness>agent";
inline constexpr const char* kToHarness = "agent>harness";

// HMAC-SHA256(secret, "session|" agent's challenge "|" harness's challenge "|" host) as hex: fresh for
// every connection, as both challenges are.
std::string session_key(const std::string& secret, const std::string& agent_challenge,
                        const std::string& harness_challenge, const std::string& host);

// Why a received message was dropped; kTaken when it was not.
enum class SealCheck { kTaken, kNoMac, kBadMac, kOutOfOrder };
// "no MAC", "a wrong MAC", "a replayed or out-of-order sequence number".
const char* describe(SealCheck check);

// One side's seal of a connection: numbers what it sends and checks what it receives.
class MessageSeal {
 public:
  MessageSeal(std::string key, std::string send_direction, std::string receive_direction);
  // `message` with "seq" (1, 2, ...) and "mac" added.
  nlohmann::json seal(nlohmann::json message);
  // Checks a received message's MAC, then that its number is the next one; on kTaken removes "seq"
  // and "mac" from it. A message that is not taken leaves the expected number where it was.
  SealCheck open(nlohmann::json& message);

 private:
  std::string mac(const std::string& direction, int64_t seq, const nlohmann::json& body) const;

  std::string key_;
  std::string send_direction_;
  std::string receive_direction_;
  int64_t sent_ = 0;
  int64_t received_ = 0;
};

}  // namespace ncclfi::cli
