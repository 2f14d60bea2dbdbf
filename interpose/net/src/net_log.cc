#include "net_log.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>

#include "ncclfi/params.h"

namespace ncclfi::net {
namespace {
std::atomic<ncclDebugLogger_t> g_logger{nullptr};
constexpr const char* kPrefix = "NET/ncclfi : ";
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
  logger(level, NCCL_NET, file, line, "%s%s", kPrefix, text);
}

void log_unprefixed(ncclDebugLogLevel level, const char* file, int line, const char* fmt, ...) {
  ncclDebugLogger_t logger = g_logger.load();
  if (!logger) return;
  char text[1024];
  va_list args;
  va_start(args, fmt);
  vsnprintf(text, sizeof(text), fmt, args);
  va_end(args);
  logger(level, NCCL_NET, file, line, "%s", text);
}

bool quiet() {
  return Params::get().quiet;
}

}  // namespace ncclfi::net
