#include "injection_receiver.h"

#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "agent_protocol.h"
#include "ncclfi/injection_channel.h"

namespace ncclfi::cli {
namespace {

// Room for the records of a burst of injections while the attempt loop sleeps between polls.
constexpr int kReceiveBufferBytes = 8 << 20;

constexpr const char* kDirPrefix = "ncclfi-inject-";  // then its owner's pid, '-', mkdtemp's letters

// The directories of harnesses and agents of this user that are gone (killed by SIGKILL: no destructor
// ran).
void remove_stale_directories(const std::string& parent) try {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(parent, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(kDirPrefix, 0) != 0) continue;
    const long pid = std::strtol(name.c_str() + std::strlen(kDirPrefix), nullptr, 10);
    struct stat st {};
    if (pid <= 0 || ::lstat(entry.path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) ||
        st.st_uid != ::getuid())
      continue;
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
      std::filesystem::remove_all(entry.path(), ec);
  }
} catch (const std::filesystem::filesystem_error&) {
  // A folder that cannot be read to the end: what is left stays, the new channel does not depend on it.
}

std::runtime_error failure(const std::string& what) {
  return std::runtime_error("injection channel: " + what + ": " + std::strerror(errno));
}

}  // namespace

InjectionReceiver::InjectionReceiver() : key_(random_hex(32)) {
  const char* tmp = std::getenv("TMPDIR");
  const std::string parent = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  remove_stale_directories(parent);
  std::string pattern = parent + "/" + kDirPrefix + std::to_string(::getpid()) + "-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) throw failure("cannot create a private directory " + pattern);
  dir_ = pattern;  // mkdtemp makes it 0700: only this user reaches the socket
  socket_path_ = dir_ + "/socket";
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path_.size() >= sizeof(addr.sun_path)) {
    ::rmdir(dir_.c_str());
    errno = ENAMETOOLONG;
    throw failure("socket path " + socket_path_ + " is too long (set TMPDIR to a shorter directory)");
  }
  std::memcpy(addr.sun_path, socket_path_.c_str(), socket_path_.size() + 1);
  fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd_ < 0 || ::bind(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    const int saved = errno;
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    ::rmdir(dir_.c_str());
    errno = saved;
    throw failure("cannot bind " + socket_path_);
  }
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &kReceiveBufferBytes, sizeof(kReceiveBufferBytes));
}

InjectionReceiver::~InjectionReceiver() {
  if (fd_ >= 0) ::close(fd_);
  ::unlink(socket_path_.c_str());
  ::rmdir(dir_.c_str());
}

std::map<std::string, std::string> InjectionReceiver::env() const {
  return {{kInjectSocketVar, socket_path_}, {kInjectKeyVar, key_}};
}

void InjectionReceiver::drain(const InjectionSink& sink) {
  while (true) {
    const ssize_t n = ::recv(fd_, buffer_.data(), buffer_.size(), MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return;  // nothing waiting (EAGAIN) or the socket is gone: the ledger judges what is missing
    const auto datagram =
        decode_injection_datagram(key_, std::string_view(buffer_.data(), static_cast<size_t>(n)));
    if (datagram) {
      sink.authentic(*datagram);
    } else {
      sink.rejected(1);
    }
  }
}

}  // namespace ncclfi::cli
