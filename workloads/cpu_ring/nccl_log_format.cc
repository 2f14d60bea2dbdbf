#include "nccl_log_format.h"

#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace ncclfi::cpu_ring {
namespace {

std::string upper(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

net::NcclVersion nccl_version_from_environment() {
  const char* text = std::getenv("NCCLFI_NCCL_VERSION");
  if (text == nullptr || *text == '\0') return net::kNewestKnownNccl;
  const std::string value = text;
  net::NcclVersion v;
  if (value.find('.') != std::string::npos) {
    v = net::NcclVersion::parse(value);
  } else {
    char* end = nullptr;
    const long code = std::strtol(value.c_str(), &end, 10);
    if (*end == '\0') v = net::NcclVersion::from_code(static_cast<int>(code));
  }
  return v.known() ? v : net::kNewestKnownNccl;
}

NcclLogFormat::NcclLogFormat(net::NcclVersion version, const char* timestamp_levels,
                             const char* timestamp_format) {
  if (version.before(2, 26, 2)) return;  // no timestamps before NCCL 2.26.2
  stamp_warn_ = true;
  if (timestamp_levels != nullptr && *timestamp_levels != '\0') {
    stamp_warn_ = false;
    std::stringstream names(upper(timestamp_levels));
    for (std::string name; std::getline(names, name, ',');) {
      if (name == "WARN" || name == "ALL") stamp_warn_ = true;
      if (name == "INFO" || name == "ALL") stamp_info_ = true;
    }
  }
  format_ = timestamp_format != nullptr ? timestamp_format : "[%F %T] ";
  for (char& c : format_)
    if (c == '_') c = ' ';
}

NcclLogFormat NcclLogFormat::from_environment() {
  return NcclLogFormat(nccl_version_from_environment(), std::getenv("NCCL_DEBUG_TIMESTAMP_LEVELS"),
                       std::getenv("NCCL_DEBUG_TIMESTAMP_FORMAT"));
}

std::string NcclLogFormat::timestamp(bool warn, const timespec& now) const {
  if (!(warn ? stamp_warn_ : stamp_info_) || format_.empty()) return {};
  // The first %Nf (N from 1 to 9) becomes N digits of the subseconds, as debug.cc does before strftime.
  std::string format = format_;
  for (size_t i = 0; i + 2 < format.size(); ++i) {
    if (format[i] == '%' && format[i + 1] == '%') {
      ++i;
      continue;
    }
    if (format[i] == '%' && format[i + 1] >= '1' && format[i + 1] <= '9' && format[i + 2] == 'f') {
      const int digits = format[i + 1] - '0';
      long scale = 1;
      for (int d = digits; d < 9; ++d) scale *= 10;
      char sub[16];
      std::snprintf(sub, sizeof sub, "%0*ld", digits, now.tv_nsec / scale);
      format.replace(i, 3, sub);
      break;
    }
  }
  std::tm local{};
  const time_t seconds = now.tv_sec;
  localtime_r(&seconds, &local);
  char out[256];
  // The format is NCCL_DEBUG_TIMESTAMP_FORMAT, a user's strftime format, as NCCL itself takes it.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
  size_t n = std::strftime(out, sizeof out, format.c_str(), &local);
#pragma GCC diagnostic pop
  if (n == 0) n = std::strftime(out, sizeof out, "[%F %T] ", &local);  // as NCCL falls back
  return std::string(out, n);
}

std::string nccl_log_host() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "localhost";
  const std::string host = name;
  return host.substr(0, host.find('.'));
}

}  // namespace ncclfi::cpu_ring
