#include "ncclfi/injection_channel.h"

#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

namespace ncclfi {
namespace {

std::string to_hex(const unsigned char* data, size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(n * 2);
  for (size_t i = 0; i < n; ++i) {
    out.push_back(kDigits[data[i] >> 4]);
    out.push_back(kDigits[data[i] & 15]);
  }
  return out;
}

// The value of `name`, then gone: its text wiped where it lies (the original environment block is what
// /proc/<pid>/environ shows, and unsetenv only drops the pointer to it) and the variable unset.
std::string take_env(const char* name) {
  const size_t name_len = std::strlen(name);
  std::string value;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    if (std::strncmp(*e, name, name_len) != 0 || (*e)[name_len] != '=') continue;
    char* text = *e + name_len + 1;
    if (value.empty()) value = text;
    std::memset(text, 0, std::strlen(text));
  }
  ::unsetenv(name);
  return value;
}

InjectionChannel* g_channel = nullptr;  // this library's view of the process's channel

InjectionChannel* channel_of_this_process() {
  const char* handle = std::getenv(kInjectHandleVar);
  if (handle == nullptr) return nullptr;
  long pid = 0;
  uintptr_t address = 0;
  if (std::sscanf(handle, "%ld:%" SCNxPTR, &pid, &address) != 2 || pid != ::getpid()) return nullptr;
  return reinterpret_cast<InjectionChannel*>(address);  // NOLINT(performance-no-int-to-ptr)
}

// Each injector library takes the channel from its constructor, before the workload's main() runs.
__attribute__((constructor)) void take_channel_at_load() {
  InjectionChannel::take_from_environment();
}

}  // namespace

std::string injection_mac(std::string_view key, uint64_t seq, std::string_view record) {
  const std::string message = std::to_string(seq) + "\n" + std::string(record);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &len);
  return to_hex(mac, len);
}

std::string encode_injection_datagram(std::string_view key, uint64_t seq, std::string_view record) {
  return std::to_string(seq) + " " + injection_mac(key, seq, record) + " " + std::string(record);
}

std::optional<InjectionDatagram> decode_injection_datagram(std::string_view key, std::string_view datagram) {
  const size_t first = datagram.find(' ');
  if (first == std::string_view::npos || first == 0 || first > 20) return std::nullopt;
  const size_t second = datagram.find(' ', first + 1);
  if (second == std::string_view::npos) return std::nullopt;
  const std::string_view seq_text = datagram.substr(0, first);
  if (seq_text.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
  InjectionDatagram out;
  out.seq = std::strtoull(std::string(seq_text).c_str(), nullptr, 10);
  out.record = std::string(datagram.substr(second + 1));
  const std::string mac(datagram.substr(first + 1, second - first - 1));
  const std::string expected = injection_mac(key, out.seq, out.record);
  if (mac.size() != expected.size() || CRYPTO_memcmp(mac.data(), expected.data(), mac.size()) != 0)
    return std::nullopt;
  return out;
}

InjectionChannel* InjectionChannel::process() {
  return g_channel;
}

InjectionChannel* InjectionChannel::take_from_environment() {
  static std::once_flag once;
  std::call_once(once, [] {
    if ((g_channel = channel_of_this_process()) != nullptr) return;
    const std::string path = take_env(kInjectSocketVar);
    const std::string key = take_env(kInjectKeyVar);
    if (path.empty() || key.empty()) return;
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof(addr.sun_path)) return;
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return;
    // A harness that stopped reading must not hold an injection (and the rank's call) for long.
    const timeval timeout{1, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
      ::close(fd);
      return;
    }
    g_channel = new InjectionChannel(fd, key);  // lives as long as the process: points fire until exit
    char handle[64];
    std::snprintf(handle, sizeof(handle), "%ld:%" PRIxPTR, static_cast<long>(::getpid()),
                  reinterpret_cast<uintptr_t>(g_channel));
    ::setenv(kInjectHandleVar, handle, 1);
  });
  return g_channel;
}

bool InjectionChannel::send(uint64_t seq, std::string_view record) const {
  const std::string datagram = encode_injection_datagram(key_, seq, record);
  ssize_t n;
  do {
    n = ::send(fd_, datagram.data(), datagram.size(), MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(datagram.size());
}

}  // namespace ncclfi
