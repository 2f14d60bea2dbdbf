#include "agent_seal.h"

#include <utility>

#include "agent_protocol.h"

namespace ncclfi::cli {

std::string session_key(const std::string& secret, const std::string& agent_challenge,
                        const std::string& harness_challenge, const std::string& host) {
  return agent_mac(secret, "session", agent_challenge + "|" + harness_challenge, host);
}

const char* describe(SealCheck check) {
  switch (check) {
    case SealCheck::kTaken:
      return "taken";
    case SealCheck::kNoMac:
      return "no MAC";
    case SealCheck::kBadMac:
      return "a wrong MAC";
    case SealCheck::kOutOfOrder:
      return "a replayed or out-of-order sequence number";
  }
  return "unknown";
}

MessageSeal::MessageSeal(std::string key, std::string send_direction, std::string receive_direction)
    : key_(std::move(key)),
      send_direction_(std::move(send_direction)),
      receive_direction_(std::move(receive_direction)) {}

// The body is the message without "seq" and "mac", written as LineChannel::send writes a line (keys in
// order, invalid UTF-8 replaced), so that the receiver's re-serialisation of what it parsed is the same
// text the sender signed.
std::string MessageSeal::mac(const std::string& direction, int64_t seq, const nlohmann::json& body) const {
  const std::string text = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return agent_mac(key_, direction, std::to_string(seq), text);
}

nlohmann::json MessageSeal::seal(nlohmann::json message) {
  message.erase("seq");
  message.erase("mac");
  const int64_t seq = ++sent_;
  const std::string m = mac(send_direction_, seq, message);
  message["seq"] = seq;
  message["mac"] = m;
  return message;
}

SealCheck MessageSeal::open(nlohmann::json& message) {
  const std::string claimed = text_field(message, "mac");
  const int64_t seq = int_field(message, "seq", -1);
  if (claimed.empty() || seq < 0) return SealCheck::kNoMac;
  nlohmann::json body = message;
  body.erase("seq");
  body.erase("mac");
  if (!macs_equal(claimed, mac(receive_direction_, seq, body))) return SealCheck::kBadMac;
  if (seq != received_ + 1) return SealCheck::kOutOfOrder;
  received_ = seq;
  message = std::move(body);
  return SealCheck::kTaken;
}

}  // namespace ncclfi::cli
