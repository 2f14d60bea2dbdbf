// The NCCL RAS probe: NCCL's plain-text RAS client protocol (CLIENT PROTOCOL, TIMEOUT, [VERBOSE] STATUS) over
// a TCP socket, and a parser for the text status report (section names and line shapes as NCCL's
// src/ras/client_support.cc prints them).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "mechanisms.h"
#include "ras_probe.h"
#include "text_format.h"

namespace ncclfi::harness {
namespace {

using SteadyClock = std::chrono::steady_clock;

class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

int remaining_ms(SteadyClock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now()).count();
  return left > 0 ? static_cast<int>(std::min<long long>(left, 1 << 30)) : 0;
}

// Waits for `events` on fd until the deadline; false on timeout or error.
bool wait_for(int fd, short events, SteadyClock::time_point deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    int rc = ::poll(&p, 1, remaining_ms(deadline));
    if (rc > 0) return true;
    if (rc == 0) return false;
    if (errno != EINTR) return false;
  }
}

bool send_all(int fd, const std::string& data, SteadyClock::time_point deadline) {
  size_t sent = 0;
  while (sent < data.size()) {
    if (!wait_for(fd, POLLOUT, deadline)) return false;
    ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

// Reads until `stop` says the buffer is complete, the peer closes, or the deadline passes.
// Returns false only on error or timeout before anything useful.
template <typename Stop>
bool read_until(int fd, std::string& buffer, SteadyClock::time_point deadline, Stop stop, bool* closed) {
  char chunk[4096];
  while (!stop(buffer)) {
    if (!wait_for(fd, POLLIN, deadline)) return false;
    ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) return false;
    if (n == 0) {
      *closed = true;
      return true;
    }
    buffer.append(chunk, static_cast<size_t>(n));
  }
  return true;
}

// Non-blocking connect bounded by the deadline; -1 with `error` set on failure.
int connect_to(const std::string& host, int port, SteadyClock::time_point deadline, std::string& error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    error = "cannot resolve " + host + ": " + gai_strerror(rc);
    return -1;
  }
  int result = -1;
  error = "cannot connect to " + host + ":" + service;
  for (addrinfo* ai = found; ai != nullptr && result < 0; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) continue;
    int rc = ::connect(fd, ai->ai_addr, ai->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS && wait_for(fd, POLLOUT, deadline)) {
      int so_error = 0;
      socklen_t len = sizeof so_error;
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &len);
      rc = so_error == 0 ? 0 : -1;
      if (so_error != 0) error += std::string(": ") + std::strerror(so_error);
    } else if (rc != 0) {
      error += std::string(": ") + std::strerror(errno);
    }
    if (rc == 0) {
      result = fd;
    } else {
      ::close(fd);
    }
  }
  ::freeaddrinfo(found);
  return result;
}

bool has_line(const std::string& buffer) {
  return buffer.find('\n') != std::string::npos;
}

std::string first_line(const std::string& buffer) {
  std::string line = buffer.substr(0, buffer.find('\n'));
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

}  // namespace

RasProbeOptions ras_address_from_env(const char* env_value) {
  RasProbeOptions options;
  if (env_value == nullptr || *env_value == '\0') return options;
  std::string value(env_value);
  size_t colon = value.rfind(':');
  if (colon == std::string::npos) {
    options.host = value;
    return options;
  }
  std::string host = value.substr(0, colon);
  std::string port = value.substr(colon + 1);
  if (!port.empty() && port.find_first_not_of("0123456789") == std::string::npos && port.size() <= 5) {
    int p = std::stoi(port);
    if (p > 0 && p < 65536) {
      options.port = p;
      if (!host.empty()) options.host = host;
    }
  }
  return options;
}

RasReport probe_ras(const RasProbeOptions& options) {
  RasReport report;
  const auto deadline =
      SteadyClock::now() +
      std::chrono::milliseconds(static_cast<long long>(std::max(0.05, options.timeout_s) * 1000));
  Socket socket(connect_to(options.host, options.port, deadline, report.error));
  if (socket.fd() < 0) return report;
  const int fd = socket.fd();
  bool closed = false;
  std::string buffer;
  // Handshake: the server answers "SERVER PROTOCOL <n>".
  if (!send_all(fd, "CLIENT PROTOCOL 2\n", deadline) ||
      !read_until(fd, buffer, deadline, has_line, &closed) ||
      first_line(buffer).rfind("SERVER PROTOCOL", 0) != 0) {
    report.error =
        "RAS handshake failed" + (buffer.empty() ? std::string(" (no answer)") : ": " + first_line(buffer));
    return report;
  }
  buffer.clear();
  // The server's own collection timeout: a little under ours so the report arrives before we give up.
  const long server_timeout = std::max(1L, std::lround(options.timeout_s * 0.8));
  if (!send_all(fd, "TIMEOUT " + std::to_string(server_timeout) + "\n", deadline) ||
      !read_until(fd, buffer, deadline, has_line, &closed) || first_line(buffer) != "OK") {
    report.error =
        "RAS TIMEOUT command refused" + (buffer.empty() ? std::string() : ": " + first_line(buffer));
    return report;
  }
  buffer.clear();
  if (!send_all(fd, options.verbose ? "VERBOSE STATUS\n" : "STATUS\n", deadline)) {
    report.error = "cannot send STATUS";
    return report;
  }
  // The report streams back and the server closes the socket at its end.
  bool complete = read_until(
      fd, buffer, deadline, [](const std::string&) { return false; }, &closed);
  report.text = buffer;
  if (!complete && buffer.empty()) {
    report.error = "no RAS report before the timeout";
    return report;
  }
  report.ok = true;
  if (!closed) report.error = "RAS report cut short by the timeout";
  try {
    parse_ras_report(report);
  } catch (const std::exception& e) {  // a number out of range: whatever answered is not NCCL's RAS
    report.error = std::string("RAS report not understood: ") + e.what();
  }
  return report;
}

namespace {

// Reads the status report line by line. A section (INCOMPLETE, MISMATCH, ...) starts at its header and
// ends at a blank line or an unindented title; its header and first detail line make one problem. In a
// MISMATCH section's "different ... operation counts" block, the ranks behind the highest count lag.
class RasReportParser {
 public:
  explicit RasReportParser(RasReport& report) : report_(report) {}

  void read_line(std::string line) {
    constexpr size_t kMaxRasLineBytes = 1024;
    static const std::regex section_header(
        R"(^(#\d+-\d+ \([0-9a-fA-F]+\) )?(INCOMPLETE|DEAD|ERROR|MISMATCH|TIMEOUT)\s*$)");
    static const std::regex rank_line(R"(^\s+Rank (\d+)\b(.*)$)");
    if (!line.empty() && line.back() == '\r') line.pop_back();
    // NCCL's RAS lines are short; std::regex recurses per character, so a long line from whatever
    // answers on the port must not reach it.
    if (line.size() > kMaxRasLineBytes) line.resize(kMaxRasLineBytes);
    std::smatch m;
    if (std::regex_match(line, m, section_header)) {
      close_counts();
      if (!pending_problem_.empty()) report_.problems.push_back(pending_problem_);
      section_ = m[2].str();
      pending_problem_ = trim(line);
      return;
    }
    if (trim(line).empty() || line[0] != ' ') {
      // Sections end at a blank line or an unindented title ("Warnings", "========", ...).
      if (!pending_problem_.empty()) report_.problems.push_back(pending_problem_);
      pending_problem_.clear();
      close_counts();
      if (!trim(line).empty()) section_.clear();
      return;
    }
    if (!pending_problem_.empty()) {
      report_.problems.push_back(pending_problem_ + ": " + trim(line));
      pending_problem_.clear();
    }
    if (section_ == "MISMATCH" && read_counts_line(line)) return;
    if (std::regex_match(line, m, rank_line)) read_rank_line(std::stoi(m[1].str()), m[2].str());
  }

  void finish() {
    close_counts();
    if (!pending_problem_.empty()) report_.problems.push_back(pending_problem_);
    report_.missing_ranks.assign(missing_.begin(), missing_.end());
    report_.lagging_ranks.assign(lagging_.begin(), lagging_.end());
  }

 private:
  // A counts block's own lines: its title, and a group's count for the rank lines under it. True when
  // the line was one of those.
  bool read_counts_line(const std::string& line) {
    static const std::regex launched_group(R"(^\s+\d+ ranks have launched up to operation (\d+))");
    static const std::regex idle_group(R"(^\s+\d+ ranks have not launched any operations)");
    static const std::regex counts_block(R"(operation counts\s*$)");
    std::smatch m;
    if (std::regex_search(line, counts_block)) {
      close_counts();
      in_counts_ = true;
      return true;
    }
    if (in_counts_ && std::regex_search(line, m, launched_group)) {
      group_value_ = std::stoll(m[1].str());
      return true;
    }
    if (in_counts_ && std::regex_search(line, idle_group)) {
      group_value_ = 0;
      return true;
    }
    return false;
  }

  void read_rank_line(int rank, const std::string& rest) {
    static const std::regex rank_launched(R"(has launched up to operation (\d+))");
    if (section_ == "INCOMPLETE") {
      missing_.insert(rank);
    } else if (section_ == "MISMATCH" && in_counts_) {
      std::smatch value;
      if (std::regex_search(rest, value, rank_launched)) {
        counts_[rank] = std::stoll(value[1].str());
      } else if (rest.find("has not launched any operations") != std::string::npos) {
        counts_[rank] = 0;
      } else if (group_value_ >= 0) {
        counts_[rank] = group_value_;
      }
    }
  }

  // The end of a counts block: the ranks below its highest count lag.
  void close_counts() {
    if (!counts_.empty()) {
      long long top = 0;
      for (auto& [rank, value] : counts_) top = std::max(top, value);
      for (auto& [rank, value] : counts_) {
        if (value < top) lagging_.insert(rank);
      }
    }
    counts_.clear();
    group_value_ = -1;
    in_counts_ = false;
  }

  RasReport& report_;
  std::set<int> missing_;
  std::set<int> lagging_;
  std::string section_;              // the current section kind
  std::map<int, long long> counts_;  // op counts of the current "different ... operation counts" block
  long long group_value_ = -1;
  bool in_counts_ = false;
  std::string pending_problem_;  // a header waiting for its first detail line
};

}  // namespace

void parse_ras_report(RasReport& report) {
  RasReportParser parser(report);
  std::istringstream in(report.text);
  std::string line;
  while (std::getline(in, line)) parser.read_line(line);
  parser.finish();
}

void record_ras_probe(History& history, const RasReport& report, int64_t ts_ns, int attempt) {
  HistoryEvent e;
  e.ts_ns = ts_ns;
  e.attempt = attempt;
  e.source = "ras";
  e.event = "ras_report";
  e.fields = {{"ok", report.ok},
              {"error", report.error},
              {"text", report.text},
              {"missing", report.missing_ranks},
              {"lagging", report.lagging_ranks},
              {"problems", report.problems}};
  add_event(history, std::move(e));
  if (!report.ok) return;
  if (report.missing_ranks.empty() && report.lagging_ranks.empty() && report.problems.empty()) return;
  std::string evidence = "RAS: missing ranks " + ranks_text(report.missing_ranks) + "; lagging ranks " +
                         ranks_text(report.lagging_ranks);
  for (const auto& p : report.problems) evidence += "; " + p;
  add_detection(history, Detection{std::string(kRasMechanism.name), -1, attempt, ts_ns, evidence});
}

}  // namespace ncclfi::harness
