// How NCCL's bootstrap retries a connection to its root (src/misc/socket.cc, socketConnectCheck, NCCL
// 2.27.3 to 2.30), applied to ncclfi-cpu-ring's rendezvous, which stands in for it: a connect refused
// (ECONNREFUSED), unreachable (EHOSTUNREACH), timed out (ETIMEDOUT) or interrupted is retried
// NCCL_SOCKET_RETRY_CNT times (34), the n-th after n x NCCL_SOCKET_RETRY_SLEEP_MSEC (100 ms), each with
// NCCL's INFO line; then NCCL's WARN, and the rank gives up. Any other errno fails at once, with its own
// WARN. A rank that cannot reach the root is one a firewall, a wrong interface or a dead root keeps out.
#pragma once

#include <string>

#include "rendezvous.h"

namespace ncclfi::cpu_ring {

// NCCL's two settings, as NCCL reads them (an unset or malformed one is the default).
struct SocketRetrySettings {
  long retry_count = 34;  // NCCL_SOCKET_RETRY_CNT
  long sleep_ms = 100;    // NCCL_SOCKET_RETRY_SLEEP_MSEC
  static SocketRetrySettings from_environment();
};

// What NCCL logs for one failed attempt: the INFO line's or the WARN line's text (no prefix); a WARN
// means it gives up, and names the line of NCCL 2.28.9's misc/socket.cc that prints it.
struct SocketRetryStep {
  std::string text;
  int warn_line = 0;  // 0: an INFO line, and NCCL tries again after sleep_ms
  long sleep_ms = 0;
  bool give_up() const { return warn_line != 0; }
};
SocketRetryStep socket_retry_step(const Rendezvous::ConnectFailure& failure,
                                  const SocketRetrySettings& settings);

}  // namespace ncclfi::cpu_ring
