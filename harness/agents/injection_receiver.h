// The receiving end of the injection channel (ncclfi/injection_channel.h): per attempt, a Unix datagram
// socket in a private directory (0700) and a random key, handed to the ranks' injectors through the
// environment (never argv). The harness opens one for the ranks it starts on its own host, and each node
// agent one for the ranks on its node (injection_relay.h). Each datagram that arrives is checked against
// the key here, and only then handed on: to the attempt's InjectionLedger, or over the agent's link.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ncclfi/injection_channel.h"

namespace ncclfi::cli {

// Where drained datagrams go: each authenticated record, and how many datagrams failed authentication.
struct InjectionSink {
  std::function<void(const InjectionDatagram&)> authentic;
  std::function<void(size_t)> rejected;
};

class InjectionReceiver {
 public:
  // Creates the directory under $TMPDIR (else /tmp; a socket path must stay short) and binds the socket,
  // after removing the directories that harnesses or agents of this user killed by SIGKILL left there.
  // Throws std::runtime_error saying what failed.
  InjectionReceiver();
  ~InjectionReceiver();  // closes the socket and removes the directory
  InjectionReceiver(const InjectionReceiver&) = delete;
  InjectionReceiver& operator=(const InjectionReceiver&) = delete;

  // NCCLFI_INJECT_SOCKET and NCCLFI_INJECT_KEY, for every process of the job.
  std::map<std::string, std::string> env() const;
  // Hands every datagram waiting on the socket to `sink`; never blocks.
  void drain(const InjectionSink& sink);

  // A record is one event line (well under this); a longer datagram is cut by recv and fails its MAC.
  static constexpr size_t kMaxDatagramBytes = 128 << 10;

 private:
  std::string dir_;
  std::string socket_path_;
  std::string key_;
  int fd_ = -1;
  std::vector<char> buffer_ = std::vector<char>(kMaxDatagramBytes);  // one datagram at a time
};

}  // namespace ncclfi::cli
