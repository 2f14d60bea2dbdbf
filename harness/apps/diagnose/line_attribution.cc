#include "line_attribution.h"

#include <array>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <filesystem>

#include "line_regex.h"

namespace ncclfi::diagnose {
namespace {

using harness::LineRegex;

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// The number of `len` digits at `text[pos]`, or -1.
int digits_at(std::string_view text, size_t pos, size_t len) {
  if (pos + len > text.size()) return -1;
  int value = 0;
  for (size_t i = pos; i < pos + len; ++i) {
    if (!is_digit(text[i])) return -1;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

int to_int(const std::string& digits) {
  int value = -1;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  return ec == std::errc() && end == digits.data() + digits.size() ? value : -1;
}

LogTime make_time(int month, int day, int h, int m, int s, int64_t ns) {
  const int64_t seconds = ((static_cast<int64_t>(month) * 32 + day) * 24 + h) * 3600 + int64_t{m} * 60 + s;
  return LogTime{seconds * 1000000000LL + ns};
}

// "HH:MM:SS" at pos, then an optional fraction; fills h, m, s, ns and returns the end, or npos.
size_t clock_at(std::string_view text, size_t pos, int& h, int& m, int& s, int64_t& ns) {
  h = digits_at(text, pos, 2);
  m = digits_at(text, pos + 3, 2);
  s = digits_at(text, pos + 6, 2);
  if (h < 0 || m < 0 || s < 0 || text[pos + 2] != ':' || text[pos + 5] != ':' || h > 23 || m > 59 || s > 60)
    return std::string_view::npos;
  size_t end = pos + 8;
  ns = 0;
  if (end < text.size() && (text[end] == '.' || text[end] == ',')) {
    int64_t scale = 100000000;
    for (++end; end < text.size() && is_digit(text[end]); ++end) {
      ns += (text[end] - '0') * scale;
      scale /= 10;
    }
  }
  return end;
}

constexpr std::array<std::string_view, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

// Strips the launchers' prefixes from the front of `body`; returns the rank they name, or -1.
int strip_launcher_prefixes(std::string_view& body) {
  static const LineRegex openmpi(R"(^\[\d+,(\d+)\]<(?:stdout|stderr)>: ?)");
  static const LineRegex torch(R"(^\[(?:default|rank)(\d+)\]: ?)");
  static const LineRegex srun(R"(^\s*(\d+): )");
  int rank = -1;
  for (int round = 0; round < 4; ++round) {
    std::string digits;
    const LineRegex* hit = nullptr;
    for (const LineRegex* re : {&openmpi, &torch}) {
      if (re->search(body, &digits)) {
        hit = re;
        break;
      }
    }
    if (hit == nullptr && round == 0 && srun.search(body, &digits)) hit = &srun;
    if (hit == nullptr) break;
    if (rank < 0) rank = to_int(digits);
    // Cut the prefix: up to and including its ':' (and one space).
    size_t colon = hit == &openmpi ? body.find(">:") + 1 : body.find(':');
    body.remove_prefix(colon + 1);
    if (!body.empty() && body.front() == ' ') body.remove_prefix(1);
  }
  return rank;
}

}  // namespace

std::string format_time(const LogTime& t) {
  int64_t seconds = t.key_ns / 1000000000LL;
  const int64_t ms = (t.key_ns % 1000000000LL) / 1000000;
  const int64_t s = seconds % 60, m = (seconds / 60) % 60, h = (seconds / 3600) % 24;
  const int64_t days = seconds / 86400;
  char buf[40];
  std::snprintf(buf, sizeof buf, "%02lld-%02lld %02lld:%02lld:%02lld.%03lld",
                static_cast<long long>(days / 32), static_cast<long long>(days % 32),
                static_cast<long long>(h), static_cast<long long>(m), static_cast<long long>(s),
                static_cast<long long>(ms));
  return buf;
}

std::optional<LogTime> parse_time(std::string_view text) {
  const std::string_view head = text.substr(0, 80);
  int h = 0, m = 0, s = 0;
  int64_t ns = 0;
  for (size_t i = 0; i + 8 <= head.size(); ++i) {
    // ISO 8601: 2026-12-02T10:00:00 (or a space for the T)
    if (i + 19 <= head.size() && digits_at(head, i, 4) >= 1970 && head[i + 4] == '-' && head[i + 7] == '-' &&
        (head[i + 10] == 'T' || head[i + 10] == ' ')) {
      const int month = digits_at(head, i + 5, 2), day = digits_at(head, i + 8, 2);
      if (month >= 1 && month <= 12 && day >= 1 && day <= 31 &&
          clock_at(head, i + 11, h, m, s, ns) != std::string_view::npos)
        return make_time(month, day, h, m, s, ns);
    }
    // glog: [IWEF]MMDD HH:MM:SS.frac, at the start of the text or after '['
    if ((i == 0 || head[i - 1] == '[' || head[i - 1] == ' ') &&
        std::string_view("IWEF").find(head[i]) != std::string_view::npos && i + 14 <= head.size() &&
        head[i + 5] == ' ') {
      const int month = digits_at(head, i + 1, 2), day = digits_at(head, i + 3, 2);
      if (month >= 1 && month <= 12 && day >= 1 && day <= 31 &&
          clock_at(head, i + 6, h, m, s, ns) != std::string_view::npos)
        return make_time(month, day, h, m, s, ns);
    }
    // syslog: "Dec  2 10:00:00" at the start
    if (i == 0 && head.size() >= 15) {
      for (size_t month = 0; month < kMonths.size(); ++month) {
        if (head.substr(0, 3) != kMonths[month] || head[3] != ' ') continue;
        const size_t day_at = head[4] == ' ' ? 5 : 4;
        const int day = head[4] == ' ' ? digits_at(head, 5, 1) : digits_at(head, 4, 2);
        const size_t clock = day_at + (head[4] == ' ' ? 1 : 2) + 1;
        if (day >= 1 && clock < head.size() && clock_at(head, clock, h, m, s, ns) != std::string_view::npos)
          return make_time(static_cast<int>(month) + 1, day, h, m, s, ns);
      }
    }
  }
  return std::nullopt;
}

LineOrigin attribute_line(std::string_view text) {
  LineOrigin origin;
  std::string_view body = text.substr(0, 1024);
  origin.rank = strip_launcher_prefixes(body);
  origin.time = parse_time(body);
  // NCCL's prefix: host:pid:tid [dev], after the timestamp NCCL 2.26.2 and later put before a WARN
  // ("[2026-12-02 18:35:14] ", NCCL_DEBUG_TIMESTAMP_FORMAT's default, subseconds or not).
  static const LineRegex nccl_host(
      R"(^(?:\[\d{4}-\d\d-\d\d[ T][\d:.]+\] )?([A-Za-z0-9][A-Za-z0-9._-]*):\d+:\d+ \[\d+\] )");
  static const LineRegex nccl_process(
      R"(^(?:\[\d{4}-\d\d-\d\d[ T][\d:.]+\] )?([A-Za-z0-9][A-Za-z0-9._-]*:\d+):\d+ \[\d+\] )");
  // syslog: "Mon DD HH:MM:SS host something:"
  static const LineRegex syslog_host(R"(^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d(?:\.\d+)? (\S+) \S+:)");
  std::string host;
  if (nccl_host.search(body, &host)) {
    origin.host = host;
    nccl_process.search(body, &origin.process);
    // init.cc: "comm %p rank %d nRanks %d nNodes ..." and "<function> comm %p rank %d nranks %d cudaDev ...".
    static const LineRegex communicator(
        R"( NCCL INFO (?:\[Rank \d+\] )?(?:\w+ )?comm 0x[0-9a-f]+ rank (\d+ n[Rr]anks \d+) )");
    std::string numbers;
    if (communicator.search(body, &numbers)) {
      origin.communicator_rank = to_int(numbers.substr(0, numbers.find(' ')));
      origin.communicator_size = to_int(numbers.substr(numbers.rfind(' ') + 1));
    }
  } else if (syslog_host.search(body, &host)) {
    origin.host = host;
  }
  if (origin.rank < 0 && origin.process.empty()) {
    // PyTorch's "[Rank 3]" or "... Rank 3]" (the default process group's rank is the global rank). Not in
    // NCCL's own lines: from 2.29.2 its Init START begins "[Rank N]", N the rank in that communicator.
    static const LineRegex torch_rank(R"((?:\[Rank |default_pg\) Rank )(\d+)\])");
    std::string digits;
    if (torch_rank.search(body, &digits)) origin.rank = to_int(digits);
  }
  return origin;
}

int rank_from_file_name(std::string_view name) {
  static const LineRegex rank(R"((?i)(?:^|[^a-z])rank[-_.]?(\d+)(?:\D|$))");
  static const LineRegex short_rank(R"([-_.]r(\d+)\.)");
  std::string digits;
  if (rank.search(name, &digits) || short_rank.search(name, &digits)) return to_int(digits);
  return -1;
}

std::string host_from_file_name(std::string_view name) {
  static const LineRegex agent_output(R"(^output-(.+)-rank-\d+\.log$)");
  std::string host;
  return agent_output.search(name, &host) ? host : std::string();
}

std::string host_from_path(const std::string& path) {
  const std::filesystem::path p(path);
  if (std::string host = host_from_file_name(p.filename().string()); !host.empty()) return host;
  const std::filesystem::path folder = p.parent_path();
  return folder.parent_path().filename() == "nodes" ? folder.filename().string() : std::string();
}

std::string peer_address(std::string_view text) {
  static const LineRegex peer(R"((?:\b(?:peer|to|from)|Connect to) ([^\s<>]+)<\d+>)");
  std::string address;
  return peer.search(text, &address) ? address : std::string();
}

int DeviceBlocks::next(std::string_view line) {
  // ibstat ("CA 'mlx5_1'"), perfquery as run per HCA ("$ perfquery -C mlx5_1 -P 1"), nvidia-smi nvlink
  // ("GPU 1: NVIDIA H100 ..."): the block names its index.
  static const LineRegex named(R"(^(?:CA 'mlx5_|\$ perfquery -C mlx5_|GPU )(\d+)(?:'|\s|: ))");
  // nvidia-smi -q ("GPU 00000000:2A:00.0") and lspci ("2a:00.0 3D controller: NVIDIA ..."): the blocks
  // come in bus order, the n-th is GPU n.
  static const LineRegex in_bus_order(
      R"(^(GPU [0-9A-Fa-f]{8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d$|[0-9a-f]{2}:[0-9a-f]{2}\.\d (?:3D|VGA) controller: NVIDIA))");
  std::string index;
  if (named.search(line, &index)) {
    current_ = std::stoi(index.substr(0, 4));
  } else if (std::string block; in_bus_order.search(line, &block)) {
    current_ = gpus_seen_++;
  }
  return current_;
}

std::string own_address(std::string_view text) {
  static const LineRegex own(
      R"((?:Bootstrap ?: Using|OOB|NET/Socket ?: Using \[\d+\])\s*[^\s:]+:([^\s<]+)<\d+>)");
  std::string address;
  return own.search(text, &address) ? address : std::string();
}

}  // namespace ncclfi::diagnose
