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

void log_message(ncclDebugLogLevel level, const char* file, int line, const char* fmt, ...) {
  ncclDebugLogger_t logger = g_logger.load();
  if (!logger) return;
  char text[1024];
  va_list args;
  va_start(args, fmt);
  vsnprintf(text, sizeof(text), fmt, args);
  va_end(args);
  logger(level, NCCL_NET, file, line, "NET/%s : %s", plugin_name(), text);
}

void log_nccl_line(const NcclLogLine& line) {
  ncclDebugLogger_t logger = g_logger.load();
  if (!logger) return;
  logger(line.warn ? NCCL_LOG_WARN : NCCL_LOG_INFO, NCCL_NET, line.file.c_str(), line.line, "%s",
         line.text.c_str());
}

bool quiet() {
  return Params::get().quiet;
}

}  // namespace ncclfi::net
