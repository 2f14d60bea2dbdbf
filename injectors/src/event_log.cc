#include "ncclfi/event_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>

#include "ncclfi/event_line.h"

namespace ncclfi {
namespace {
int64_t read_clock(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

}  // namespace

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "unknown";
  return buf;
}

int64_t Clock::wall_ns() {
  return read_clock(CLOCK_REALTIME);
}
int64_t Clock::mono_ns() {
  return read_clock(CLOCK_MONOTONIC);
}

EventLog::EventLog(const std::string& path, std::string source, int rank)
    : source_(std::move(source)), host_(host_name()), rank_(rank) {
  if (path.empty()) return;
  fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
}

EventLog::EventLog(EventLog&& other) noexcept
    : fd_(other.fd_),
      lost_(other.lost_.load()),
      unreported_(other.unreported_.load()),
      source_(std::move(other.source_)),
      host_(std::move(other.host_)),
      rank_(other.rank_) {
  other.fd_ = -1;
}

EventLog& EventLog::operator=(EventLog&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    lost_.store(other.lost_.load());
    unreported_.store(other.unreported_.load());
    source_ = std::move(other.source_);
    host_ = std::move(other.host_);
    rank_ = other.rank_;
    other.fd_ = -1;
  }
  return *this;
}

EventLog::~EventLog() {
  if (fd_ >= 0) ::close(fd_);
}

bool EventLog::write(const std::string& event, const nlohmann::json& fields) const {
  return write_for_rank(rank_, event, fields);
}

bool EventLog::write_for_rank(int rank, const std::string& event, const nlohmann::json& fields) const {
  return write_for_rank(rank, event, fields, EventTime::now());
}

bool EventLog::write_for_rank(int rank, const std::string& event, const nlohmann::json& fields,
                              EventTime at) const {
  if (fd_ < 0) return false;
  if (const uint64_t missing = unreported_.exchange(0); missing > 0) {
    if (!write_line(rank_, ev::kEventsLost, {{"lost", missing}}, at)) unreported_ += missing;
  }
  if (write_line(rank, event, fields, at)) return true;
  ++lost_;
  ++unreported_;
  return false;
}

nlohmann::json event_line(const std::string& source, const std::string& host, int rank,
                          const std::string& event, const nlohmann::json& fields, EventTime at) {
  nlohmann::json line = {
      {"ts_ns", at.wall_ns}, {"mono_ns", at.mono_ns}, {"rank", rank},  {"pid", static_cast<int>(::getpid())},
      {"host", host},        {"source", source},      {"event", event}};
  if (fields.is_object()) {
    for (const auto& [key, value] : fields.items()) {
      if (!line.contains(key)) line[key] = value;
    }
  }
  return line;
}

bool EventLog::write_line(int rank, const std::string& event, const nlohmann::json& fields,
                          EventTime at) const {
  std::string text = event_line(source_, host_, rank, event, fields, at)
                         .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  text.push_back('\n');
  // One write(2) per line on an O_APPEND descriptor: the kernel places each whole line at the end of
  // the file, so concurrent writers (threads or processes) never interleave inside a line.
  ssize_t n;
  do {
    n = ::write(fd_, text.data(), text.size());
  } while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(text.size());
}

}  // namespace ncclfi
