#include "agent_protocol.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <vector>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "ncclfi/event_log.h"

namespace ncclfi::cli {
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

}  // namespace

std::string random_hex(size_t bytes) {
  std::vector<unsigned char> buf(bytes);
  if (RAND_bytes(buf.data(), static_cast<int>(buf.size())) != 1)
    throw std::runtime_error("no random bytes for the agents' secret");
  return to_hex(buf.data(), buf.size());
}

std::string agent_mac(const std::string& secret, const std::string& role, const std::string& challenge,
                      const std::string& host) {
  const std::string message = role + "|" + challenge + "|" + host;
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &len);
  return to_hex(mac, len);
}

bool macs_equal(const std::string& a, const std::string& b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

LineChannel::LineChannel(LineChannel&& o) noexcept
    : fd_(o.fd_),
      buffer_(std::move(o.buffer_)),
      dropped_lines_(o.dropped_lines_),
      seal_(std::move(o.seal_)),
      seal_failures_(std::move(o.seal_failures_)),
      sealed_dropped_(o.sealed_dropped_) {
  o.fd_ = -1;
}

LineChannel& LineChannel::operator=(LineChannel&& o) noexcept {
  if (this != &o) {
    close();
    fd_ = o.fd_;
    buffer_ = std::move(o.buffer_);
    dropped_lines_ = o.dropped_lines_;
    seal_ = std::move(o.seal_);
    seal_failures_ = std::move(o.seal_failures_);
    sealed_dropped_ = o.sealed_dropped_;
    o.fd_ = -1;
  }
  return *this;
}

LineChannel::~LineChannel() {
  close();
}

void LineChannel::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  buffer_.clear();
}

bool LineChannel::send(const nlohmann::json& message, int bound_ms) {
  if (fd_ < 0) return false;
  const nlohmann::json& sealed = seal_ ? seal_->seal(message) : message;
  const std::string line = sealed.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  size_t sent = 0;
  const int64_t deadline = Clock::mono_ns() + int64_t{bound_ms} * 1'000'000;
  while (sent < line.size()) {
    const ssize_t n = ::send(fd_, line.data() + sent, line.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR) && Clock::mono_ns() < deadline) {
      pollfd pfd{fd_, POLLOUT, 0};
      ::poll(&pfd, 1, 50);
      continue;
    }
    close();
    return false;
  }
  return true;
}

bool LineChannel::pump(int wait_ms) {
  if (fd_ < 0) return false;
  pollfd pfd{fd_, POLLIN, 0};
  if (::poll(&pfd, 1, wait_ms) <= 0) return true;
  char buf[16384];
  const ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
    close();
    return false;
  }
  if (n > 0) buffer_.append(buf, static_cast<size_t>(n));
  // A line longer than the limit is a broken or hostile peer: it is dropped, not buffered without end.
  const auto newline = buffer_.find('\n');
  if ((newline == std::string::npos ? buffer_.size() : newline) > kMaxAgentLineBytes) {
    close();
    return false;
  }
  return true;
}

std::optional<nlohmann::json> LineChannel::next() {
  while (true) {
    const auto newline = buffer_.find('\n');
    if (newline == std::string::npos) return std::nullopt;
    const std::string line = buffer_.substr(0, newline);
    buffer_.erase(0, newline + 1);
    auto doc = nlohmann::json::parse(line, nullptr, false);
    if (!doc.is_object()) {
      ++dropped_lines_;
      continue;
    }
    if (!seal_) return doc;
    const SealCheck check = seal_->open(doc);
    if (check == SealCheck::kTaken) return doc;
    ++sealed_dropped_;
    if (seal_failures_.size() < kMaxSealFailuresKept) seal_failures_.push_back(check);
  }
}

std::optional<nlohmann::json> LineChannel::receive(int wait_ms) {
  const int64_t deadline = Clock::mono_ns() + static_cast<int64_t>(wait_ms) * 1'000'000;
  while (true) {
    if (auto m = next()) return m;
    const int64_t left_ms = (deadline - Clock::mono_ns()) / 1'000'000;
    if (left_ms <= 0 || !pump(static_cast<int>(left_ms))) return std::nullopt;
  }
}

int connect_to(const std::string& host_port, int timeout_ms) {
  const auto colon = host_port.rfind(':');
  if (colon == std::string::npos) return -1;
  std::string host = host_port.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const std::string port = host_port.substr(colon + 1);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (::getaddrinfo(host.c_str(), port.c_str(), &hints, &res) != 0) return -1;
  int fd = -1;
  for (addrinfo* ai = res; ai != nullptr && fd < 0; ai = ai->ai_next) {
    fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0) continue;
    if (::connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) break;
    int err = errno;
    if (err == EINPROGRESS) {
      pollfd pfd{fd, POLLOUT, 0};
      err = ETIMEDOUT;
      socklen_t len = sizeof err;
      if (::poll(&pfd, 1, timeout_ms) == 1) ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    }
    if (err != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(res);
  return fd;
}

std::string text_field(const nlohmann::json& message, const char* key, const std::string& fallback) {
  const auto it = message.find(key);
  return it != message.end() && it->is_string() ? it->get<std::string>() : fallback;
}

int64_t int_field(const nlohmann::json& message, const char* key, int64_t fallback) {
  const auto it = message.find(key);
  return it != message.end() && it->is_number_integer() ? it->get<int64_t>() : fallback;
}

bool bool_field(const nlohmann::json& message, const char* key, bool fallback) {
  const auto it = message.find(key);
  return it != message.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

void agent_log_line(const std::string& text) {
  const std::string line = text + "\n";
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(2, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // stderr is gone: nothing else to tell
    done += static_cast<size_t>(n);
  }
}

}  // namespace ncclfi::cli
