// How long an InfiniBand/RoCE queue pair keeps retrying before the NIC gives up with IBV_WC_RETRY_EXC_ERR.
//
// NCCL sets the verbs local-ACK timeout from NCCL_IB_TIMEOUT (4.096 us * 2^N; default 20 since NCCL 2.23) and
// the retry count from NCCL_IB_RETRY_CNT (default 7). A peer that stops answering is reported after the first
// send plus every retry has timed out: (retry_cnt + 1) timeouts, about 34 s with the defaults. Faults that
// imitate a dead NIC or a cut cable (the shim's and the verbs layer's) take their delay from here so their
// timing is the real one.
#pragma once

#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>

namespace ncclfi {

struct IbRetrySettings {
  int timeout_exponent = 20;  // NCCL_IB_TIMEOUT
  int retry_count = 7;        // NCCL_IB_RETRY_CNT
};

// nullopt: the exponent is 0 or >= 32, which the verbs spec reads as "never time out".
inline std::optional<std::chrono::microseconds> ib_ack_timeout(int timeout_exponent) {
  if (timeout_exponent <= 0 || timeout_exponent >= 32) return std::nullopt;
  // 4.096 us * 2^N, kept in nanoseconds until the end so small exponents are exact.
  const long long ns = 4096LL << timeout_exponent;
  return std::chrono::microseconds(ns / 1000);
}

inline std::optional<std::chrono::microseconds> ib_retry_budget(const IbRetrySettings& s) {
  const auto one = ib_ack_timeout(s.timeout_exponent);
  if (!one) return std::nullopt;
  const int retries = s.retry_count < 0 ? 0 : (s.retry_count > 7 ? 7 : s.retry_count);
  return *one * (retries + 1);
}

// The settings this process's NCCL will use: its environment, else NCCL's defaults. A value that is not a
// number keeps the default (NCCL would do the same after its own warning).
inline IbRetrySettings ib_retry_settings_from_env() {
  IbRetrySettings s;
  auto read = [](const char* name, int& out) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') return;
    char* end = nullptr;
    const long n = std::strtol(v, &end, 10);
    if (end != nullptr && *end == '\0') out = static_cast<int>(n);
  };
  read("NCCL_IB_TIMEOUT", s.timeout_exponent);
  read("NCCL_IB_RETRY_CNT", s.retry_count);
  return s;
}

}  // namespace ncclfi
