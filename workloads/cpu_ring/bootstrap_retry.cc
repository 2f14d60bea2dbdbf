#include "bootstrap_retry.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace ncclfi::cpu_ring {

namespace {

long env_long(const char* name, long fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  return *end == '\0' && value >= 0 ? value : fallback;
}

// misc/socket.cc's WARN lines in NCCL 2.28.9: the retries ran out; an error it does not retry.
constexpr int kRetriesExceededLine = 582;
constexpr int kConnectFailedLine = 596;

bool retried(int err) {
  return err == EINTR || err == EWOULDBLOCK || err == EAGAIN || err == ETIMEDOUT || err == EHOSTUNREACH ||
         err == ECONNREFUSED;
}

}  // namespace

SocketRetrySettings SocketRetrySettings::from_environment() {
  SocketRetrySettings s;
  s.retry_count = env_long("NCCL_SOCKET_RETRY_CNT", s.retry_count);
  s.sleep_ms = env_long("NCCL_SOCKET_RETRY_SLEEP_MSEC", s.sleep_ms);
  return s;
}

SocketRetryStep socket_retry_step(const Rendezvous::ConnectFailure& failure,
                                  const SocketRetrySettings& settings) {
  const std::string func = failure.from_connect ? "socketStartConnect" : "socketPollConnect";
  const std::string err = std::strerror(failure.err);
  SocketRetryStep step;
  if (!retried(failure.err)) {
    step.warn_line = kConnectFailedLine;
    step.text = func + ": connect to " + failure.to + " failed : " + err;
    return step;
  }
  // NCCL counts its retries before comparing: the (retry_count + 1)-th failure gives up.
  if (failure.attempts > settings.retry_count) {
    step.warn_line = kRetriesExceededLine;
    step.text = func + ": connect to " + failure.to + " returned " + err +
                ", exceeded error retry count after " + std::to_string(failure.attempts) + " attempts";
    return step;
  }
  step.sleep_ms = failure.attempts * settings.sleep_ms;
  step.text = func + ": connect to " + failure.to + " returned " + err + ", retrying (" +
              std::to_string(failure.attempts) + "/" + std::to_string(settings.retry_count) +
              ") after sleep for " + std::to_string(step.sleep_ms) + " msec";
  return step;
}

}  // namespace ncclfi::cpu_ring
