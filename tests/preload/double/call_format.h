// One line per NCCL call, as the test double records it and as the driver expects it: the function
// name, then each argument bit-exactly (pointers in hex, ids and configs byte by byte, comms by the
// double's own id so lines compare across runs).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include <nccl.h>

namespace ncclfi_double {

// The double's communicator: a plain struct behind ncclComm_t.
struct DoubleComm {
  uint32_t magic;
  int id;
  int rank;
  int nranks;
  int device;
  int nonblocking;  // made with config.blocking = 0: calls answer ncclInProgress
  int pending;      // polls of ncclCommGetAsyncError that still answer ncclInProgress
};
inline constexpr uint32_t kCommMagic = 0x6e63636cu;

inline std::string hex(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%#llx", static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(p)));
  return buf;
}

inline std::string bytes_hex(const void* p, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  const auto* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) {
    out.push_back(digits[b[i] >> 4]);
    out.push_back(digits[b[i] & 15]);
  }
  return out;
}

inline std::string comm_str(ncclComm_t comm) {
  if (comm == nullptr) return "comm#null";
  DoubleComm c;
  std::memcpy(&c, comm, sizeof c);
  if (c.magic != kCommMagic) return "comm#bad(" + hex(comm) + ")";
  return "comm#" + std::to_string(c.id);
}

inline std::string id_str(const ncclUniqueId& id) {
  return bytes_hex(id.internal, sizeof id.internal);
}

inline std::string config_str(const ncclConfig_t* config) {
  if (config == nullptr) return "null";
  return hex(config) + "{" + bytes_hex(config, sizeof *config) + "}";
}

// name(k=v, ...) with the values already formatted.
template <class... Pairs>
std::string call_line(const char* name, const Pairs&... kv) {
  std::string line = name;
  ((line += " " + std::string(kv.first) + "=" + kv.second), ...);
  return line;
}

inline std::pair<const char*, std::string> arg(const char* k, const void* p) {
  return {k, hex(p)};
}
inline std::pair<const char*, std::string> arg(const char* k, long long v) {
  return {k, std::to_string(v)};
}
inline std::pair<const char*, std::string> arg(const char* k, int v) {
  return {k, std::to_string(v)};
}
inline std::pair<const char*, std::string> arg(const char* k, std::string v) {
  return {k, std::move(v)};
}
inline std::pair<const char*, std::string> arg(const char* k, const char* v) {
  return {k, std::string(v)};
}

}  // namespace ncclfi_double
