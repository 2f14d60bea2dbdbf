#include "net_log.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>

#include "ib_persona.h"
#include "ncclfi/params.h"

namespace ncclfi::net {
namespace {
std::atomic<ncclDebugLogger_t> g_logger{nullptr};
}  // namespace

void set_logger(ncclDebugLogger_t logger) {
  if (logger) g_logger.store(logger);
}

ncclDebugLogger_t current_logger() {
  return g_logger.load();
}

// The subsystem a line goes out under: NCCL's WARN macro passes NCCL_ALL, so that a warning passes the
// NCCL_DEBUG_SUBSYS mask (INIT,BOOTSTRAP,ENV by default) whatever it is about; an INFO line is the
// network's (NCCL_NET). With NCCL_NET on a WARN, NCCL_DEBUG=WARN kept the line out of the output (only
// ncclGetLastError had it), as seen under NCCL 2.28.3 and 2.28.9 on a GPU.
namespace {
unsigned long subsystem_for(ncclDebugLogLevel level) {
  return level == NCCL_LOG_WARN ? static_cast<unsigned long>(NCCL_ALL) : static_cast<unsigned long>(NCCL_NET);
}
}  // namespace

void log_message(ncclDebugLogLevel level, const char* file, int line, const char* fmt, ...) {
  ncclDebugLogger_t logger = g_logger.load();
  if (!logger) return;
  char text[1024];
  va_list args;
  va_start(args, fmt);
  vsnprintf(text, sizeof(text), fmt, args);
  va_end(args);
  logger(level, subsystem_for(level), file, line, "NET/%s : %s", plugin_name(), text);
}

void log_nccl_line(const NcclLogLine& line) {
  ncclDebugLogger_t logger = g_logger.load();
  if (!logger) return;
  const ncclDebugLogLevel level = line.warn ? NCCL_LOG_WARN : NCCL_LOG_INFO;
  const unsigned long subsystem =
      line.init ? static_cast<unsigned long>(NCCL_INIT | NCCL_NET) : subsystem_for(level);
  logger(level, subsystem, line.file.c_str(), line.line, "%s", line.text.c_str());
}

bool quiet() {
  return Params::get().quiet;
}

}  // namespace ncclfi::net
