// Logging through NCCL's own logger (so messages appear under NCCL_DEBUG=INFO/WARN, with NCCL's
// prefixes), each message prefixed "NET/ncclfi : " ("NET/IB : " in the IB persona, ib_persona.h). Without
// a logger (before init) nothing is printed: the shim stays silent unless NCCL asks.
#pragma once

#include "ncclfi_net/ib_completion_lines.h"
#include "ncclfi_net/net_types.h"

namespace ncclfi::net {

void set_logger(ncclDebugLogger_t logger);
// The logger NCCL gave init (nullptr before): a function of the libnccl that loaded the shim.
ncclDebugLogger_t current_logger();
void log_message(ncclDebugLogLevel level, const char* file, int line, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));
// A line NCCL itself prints, with NCCL's own file and line (what the IB persona imitates).
void log_nccl_line(const NcclLogLine& line);
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
