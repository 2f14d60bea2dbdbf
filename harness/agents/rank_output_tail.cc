#include "rank_output_tail.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "agent_protocol.h"
#include "output_tailer.h"

namespace ncclfi::cli {
namespace fs = std::filesystem;

namespace {

constexpr const char* kSpoolOutputPrefix = "output-rank-";
constexpr const char* kSpoolOutputSuffix = ".log";
// Room kept in a cut line for its marker, so that line and marker fit kOutputLineBytes.
constexpr size_t kCutMarkerRoom = 48;

std::string cut_to_limit(std::string line) {
  if (line.size() > kOutputLineBytes) {
    const size_t cut = line.size() - (kOutputLineBytes - kCutMarkerRoom);
    line.resize(kOutputLineBytes - kCutMarkerRoom);
    line += " [ncclfi: " + std::to_string(cut) + " bytes cut]";
  }
  return line;
}

// A host name as a file name's part: what a host name may hold, anything else '_'.
std::string file_safe(const std::string& host) {
  std::string out = host.substr(0, 64);
  for (char& c : out)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') c = '_';
  return out.empty() || out[0] == '.' ? "_" + out : out;
}

bool write_all(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

uint64_t count_field(const nlohmann::json& m, const char* name) {
  const auto it = m.find(name);
  if (it == m.end() || !it->is_number_integer()) return 0;
  return it->is_number_unsigned() ? it->get<uint64_t>()
                                  : static_cast<uint64_t>(std::max<int64_t>(0, it->get<int64_t>()));
}

}  // namespace

std::string spool_output_path(const std::string& spool_dir, int rank) {
  return spool_dir + "/" + kSpoolOutputPrefix + std::to_string(rank) + kSpoolOutputSuffix;
}

int spool_output_rank(const std::string& file_name) {
  const std::string prefix = kSpoolOutputPrefix, suffix = kSpoolOutputSuffix;
  if (file_name.size() <= prefix.size() + suffix.size() || file_name.rfind(prefix, 0) != 0 ||
      file_name.compare(file_name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return -1;
  const std::string digits =
      file_name.substr(prefix.size(), file_name.size() - prefix.size() - suffix.size());
  if (digits.size() > 9 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return -1;
  return std::atoi(digits.c_str());
}

void LineCutter::feed(const char* data, size_t n, const Sink& line) {
  const size_t keep = kOutputLineBytes - kCutMarkerRoom;
  while (n > 0) {
    const auto* newline = static_cast<const char*>(std::memchr(data, '\n', n));
    const size_t part = newline != nullptr ? static_cast<size_t>(newline - data) : n;
    const size_t room = keep > partial_.size() ? keep - partial_.size() : 0;
    partial_.append(data, std::min(part, room));
    cut_bytes_ += part - std::min(part, room);
    if (newline == nullptr) return;
    emit(line);
    data += part + 1;
    n -= part + 1;
  }
}

void LineCutter::finish(const Sink& line) {
  if (!partial_.empty() || cut_bytes_ > 0) emit(line);
}

void LineCutter::emit(const Sink& line) {
  std::string text = std::move(partial_);
  partial_.clear();
  if (cut_bytes_ > 0) {
    text += " [ncclfi: " + std::to_string(cut_bytes_) + " bytes cut]";
    ++cut_lines_;
  }
  cut_bytes_ = 0;
  line(std::move(text));
}

void TailRing::push(std::string line) {
  ++total_;
  if (capacity_ == 0) return;
  if (lines_.size() == capacity_) lines_.pop_front();
  lines_.push_back(cut_to_limit(std::move(line)));
}

bool ByteBudget::take(size_t bytes, int64_t now_ns) {
  if (now_ns > last_ns_) {
    tokens_ = std::min(burst_, tokens_ + rate_ * static_cast<double>(now_ns - last_ns_) / 1e9);
    last_ns_ = now_ns;
  }
  if (static_cast<double>(bytes) > tokens_) return false;
  tokens_ -= static_cast<double>(bytes);
  return true;
}

SpoolOutputFile::SpoolOutputFile(const std::string& path, uint64_t cap) : cap_(cap) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
}

SpoolOutputFile::~SpoolOutputFile() {
  close();
}

void SpoolOutputFile::feed(int stream, const char* data, size_t n) {
  cutters_[stream == 0 ? 0 : 1].feed(data, n, [this](std::string line) { take(std::move(line)); });
}

void SpoolOutputFile::take(std::string line) {
  ++lines_;
  // Once a line did not fit, none after it is written either: the file stays the rank's first lines,
  // in order, and the kept tail follows them at close().
  if (skipped_lines_ == 0 && written_ + line.size() + 1 <= cap_) {
    write_line(line);
    return;
  }
  ++skipped_lines_;
  skipped_bytes_ += line.size() + 1;
  overflow_.push(std::move(line));
}

void SpoolOutputFile::write_line(const std::string& line) {
  if (fd_ < 0) return;
  // A failed write (a full /tmp) closes the file: the rank's own output to its launcher goes on.
  if (!write_all(fd_, line + "\n")) {
    ::close(fd_);
    fd_ = -1;
    return;
  }
  written_ += line.size() + 1;
}

void SpoolOutputFile::close() {
  if (fd_ < 0) return;
  for (auto& c : cutters_) c.finish([this](std::string line) { take(std::move(line)); });
  if (skipped_lines_ > 0) {
    const auto kept = overflow_.lines();
    write_line("[ncclfi: " + std::to_string(skipped_lines_ - kept.size()) + " lines (" +
               std::to_string(skipped_bytes_) + " bytes) of this rank's output were not kept: over the " +
               std::to_string(cap_ >> 20) + " MiB of the node's spool; its last " +
               std::to_string(kept.size()) + " lines follow]");
    for (const auto& line : kept) write_line(line);
  }
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

nlohmann::json tail_message(int rank, const RankTail& tail, size_t max_bytes) {
  auto lines = tail.ring.lines();
  size_t omitted = 0;
  while (true) {
    nlohmann::json m = {{"t", "tail"},
                        {"rank", rank},
                        {"lines", lines},
                        {"lines_total", tail.ring.total()},
                        {"dropped", tail.dropped},
                        {"skipped_lines", tail.skipped_lines},
                        {"skipped_bytes", tail.skipped_bytes},
                        {"cut_lines", tail.cut_lines},
                        {"omitted", omitted}};
    if (lines.empty() ||
        m.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).size() + 1 <= max_bytes)
      return m;
    lines.erase(lines.begin());
    ++omitted;
  }
}

struct NodeOutputStreamer::File {
  explicit File(const std::string& path) : tailer(path, 0, kOutputLineBytes) {}
  OutputTailer tailer;
};

NodeOutputStreamer::NodeOutputStreamer(std::string spool_dir, int64_t now_ns, double bytes_per_s,
                                       double burst)
    : spool_dir_(std::move(spool_dir)), budget_(bytes_per_s, burst, now_ns) {}

NodeOutputStreamer::~NodeOutputStreamer() = default;

void NodeOutputStreamer::poll(const Send& send, int64_t now_ns, bool final) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(spool_dir_, ec)) {
    const int rank = spool_output_rank(entry.path().filename().string());
    if (rank >= 0 && !files_.count(rank)) files_[rank] = std::make_unique<File>(entry.path().string());
  }
  for (const auto& [rank, file] : files_) read_file(rank, final, send, now_ns);
}

void NodeOutputStreamer::read_file(int rank, bool final, const Send& send, int64_t now_ns) {
  const auto it = files_.find(rank);
  if (it == files_.end()) return;
  RankTail& tail = tails_[rank];
  auto take = [&](const std::string& line) {
    tail.ring.push(line);
    tail_sent_[rank] = false;
    const std::string cut = cut_to_limit(line);
    if (budget_.take(cut.size() + 1, now_ns)) {
      send({{"t", "output"}, {"rank", rank}, {"line", cut}});
    } else {
      ++tail.dropped;
    }
  };
  if (final) {
    it->second->tailer.read_rest(take);
  } else {
    for (const auto& line : it->second->tailer.read_lines()) take(line);
  }
  tail.cut_lines = std::max<uint64_t>(tail.cut_lines, it->second->tailer.truncated_lines());
}

void NodeOutputStreamer::rank_ended(const nlohmann::json& rank_exit, const Send& send, int64_t now_ns) {
  const int rank = rank_exit.value("rank", -1);
  if (rank < 0) return;
  // The file may have been created just before the rank ended, after the last poll.
  if (!files_.count(rank)) {
    const std::string path = spool_output_path(spool_dir_, rank);
    if (!fs::exists(path)) return;
    files_[rank] = std::make_unique<File>(path);
  }
  read_file(rank, true, send, now_ns);
  RankTail& tail = tails_[rank];
  tail.skipped_lines = count_field(rank_exit, "output_skipped_lines");
  tail.skipped_bytes = count_field(rank_exit, "output_skipped_bytes");
  tail.cut_lines = std::max(tail.cut_lines, count_field(rank_exit, "output_cut_lines"));
  send_tail(rank, send);
}

void NodeOutputStreamer::finish(const Send& send, int64_t now_ns) {
  poll(send, now_ns, true);
  for (const auto& [rank, tail] : tails_)
    if (!tail_sent_[rank]) send_tail(rank, send);
}

void NodeOutputStreamer::send_tail(int rank, const Send& send) {
  send(tail_message(rank, tails_[rank], kMaxAgentLineBytes - kSealBytes));  // room for the seal
  tail_sent_[rank] = true;
}

HarnessOutputStore::Rank* HarnessOutputStore::rank_of(const std::string& host, const nlohmann::json& m) {
  const auto it = m.find("rank");
  if (it == m.end() || !it->is_number_integer()) return nullptr;
  const int rank = it->get<int>();
  if (rank < 0 || rank >= world_size_) return nullptr;
  Rank& r = ranks_[rank];
  r.host = host;
  return &r;
}

void HarnessOutputStore::line(const std::string& host, const nlohmann::json& message) {
  Rank* r = rank_of(host, message);
  const auto it = message.find("line");
  if (r == nullptr || it == message.end() || !it->is_string()) return;
  ++r->streamed;
  const std::string cut = cut_to_limit(it->get<std::string>());
  if (!r->tail_arrived) {  // the last lines streamed stand for the tail until it arrives (or never does)
    r->lines.push_back(cut);
    if (r->lines.size() > kTailLines) r->lines.erase(r->lines.begin());
  }
  const std::string text = cut + "\n";
  if (log_dir_.empty() || r->not_stored > 0 || r->stored_bytes + text.size() > kHarnessOutputCapBytes) {
    ++r->not_stored;
    return;
  }
  const std::string name =
      "output-" + file_safe(host) + "-rank-" + std::to_string(message["rank"].get<int>()) + ".log";
  const int fd = ::open((log_dir_ + "/" + name).c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0 || !write_all(fd, text)) {
    ++r->not_stored;
  } else {
    r->file = name;
    r->stored_bytes += text.size();
  }
  if (fd >= 0) ::close(fd);
}

void HarnessOutputStore::tail(const std::string& host, const nlohmann::json& message) {
  Rank* r = rank_of(host, message);
  if (r == nullptr) return;
  r->tail_arrived = true;
  r->lines.clear();
  if (const auto it = message.find("lines"); it != message.end() && it->is_array()) {
    for (const auto& l : *it) {
      if (r->lines.size() == kTailLines) break;
      if (l.is_string()) r->lines.push_back(cut_to_limit(l.get<std::string>()));
    }
  }
  r->lines_total = count_field(message, "lines_total");
  r->dropped = count_field(message, "dropped");
  r->skipped_lines = count_field(message, "skipped_lines");
  r->skipped_bytes = count_field(message, "skipped_bytes");
  r->cut_lines = count_field(message, "cut_lines");
}

}  // namespace ncclfi::cli
