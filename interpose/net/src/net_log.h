// Logging through NCCL's own logger (so messages appear under NCCL_DEBUG=INFO/WARN, with NCCL's
// prefixes), each message prefixed "NET/ncclfi : ". Without a logger (before init) nothing is printed:
// the shim stays silent unless NCCL asks.
#pragma once

#include "ncclfi_net/net_types.h"

namespace ncclfi::net {

void set_logger(ncclDebugLogger_t logger);
void log_message(ncclDebugLogLevel level, const char* file, int line, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));
// Without the "NET/ncclfi : " prefix: for the lines a fault imitates from another transport (nic_down
// writes what NCCL's IB transport writes).
void log_unprefixed(ncclDebugLogLevel level, const char* file, int line, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));
// NCCLFI_QUIET (training labs): the shim's own messages about faults are left out of NCCL's log.
bool quiet();

}  // namespace ncclfi::net

#define NCCLFI_NET_WARN(...) ::ncclfi::net::log_message(NCCL_LOG_WARN, __FILE__, __LINE__, __VA_ARGS__)
#define NCCLFI_NET_FAULT_WARN(...) \
  (::ncclfi::net::quiet() ? void() \
                          : ::ncclfi::net::log_message(NCCL_LOG_WARN, __FILE__, __LINE__, __VA_ARGS__))
#define NCCLFI_NET_FAULT_INFO(...) \
  (::ncclfi::net::quiet() ? void() \
                          : ::ncclfi::net::log_message(NCCL_LOG_INFO, __FILE__, __LINE__, __VA_ARGS__))
#define NCCLFI_NET_INFO(...) ::ncclfi::net::log_message(NCCL_LOG_INFO, __FILE__, __LINE__, __VA_ARGS__)
