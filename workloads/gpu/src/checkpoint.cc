#include "checkpoint.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace ncclfi::workload {
namespace {

constexpr std::string_view kMagic = "ncclfi-workload-checkpoint 1";

uint32_t fnv1a32(std::string_view bytes) {
  uint32_t hash = 2166136261u;
  for (char c : bytes) {
    hash ^= static_cast<uint8_t>(c);
    hash *= 16777619u;
  }
  return hash;
}

std::string hex(uint64_t value, int width) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%0*llx", width, static_cast<unsigned long long>(value));
  return buffer;
}

uint64_t parse_number(std::string_view text, int base, int line_no, const char* what) {
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    throw CheckpointError("checkpoint line " + std::to_string(line_no) + ": bad " + what + " '" +
                          std::string(text) + "'");
  }
  return value;
}

std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> words;
  size_t pos = 0;
  while (pos < line.size()) {
    const size_t end = std::min(line.find(' ', pos), line.size());
    if (end == pos) throw CheckpointError("checkpoint: doubled space in '" + std::string(line) + "'");
    words.push_back(line.substr(pos, end - pos));
    pos = end + 1;
  }
  return words;
}

}  // namespace

uint64_t digest_mix(uint64_t value) {
  value += uint64_t{0x9e3779b97f4a7c15};
  value = (value ^ (value >> 30)) * uint64_t{0xbf58476d1ce4e5b9};
  value = (value ^ (value >> 27)) * uint64_t{0x94d049bb133111eb};
  return value ^ (value >> 31);
}

uint64_t digest_step(uint64_t digest, uint64_t seq, int op, int dtype, uint64_t count, uint64_t wrong) {
  uint64_t record = digest_mix(seq);
  record = digest_mix(record ^ (static_cast<uint64_t>(op) << 8 | static_cast<uint64_t>(dtype)));
  record = digest_mix(record ^ count);
  record = digest_mix(record ^ wrong);
  return digest_mix(digest ^ record);
}

void Checkpoint::push(const CheckpointEntry& entry) {
  entries.push_back(entry);
  if (entries.size() > kMaxEntries) entries.erase(entries.begin());
}

std::optional<CheckpointEntry> Checkpoint::entry_at(uint64_t step) const {
  for (const CheckpointEntry& entry : entries) {
    if (entry.next_step == step) return entry;
  }
  return std::nullopt;
}

uint64_t Checkpoint::latest_step() const {
  return entries.empty() ? 0 : entries.back().next_step;
}

std::string format_checkpoint(const Checkpoint& checkpoint) {
  std::string body;
  body += std::string(kMagic) + "\n";
  body += "rank " + std::to_string(checkpoint.rank) + "\n";
  body += "world_size " + std::to_string(checkpoint.world_size) + "\n";
  body += "plan " + hex(checkpoint.plan, 16) + "\n";
  body += "total_steps " + std::to_string(checkpoint.total_steps) + "\n";
  for (const CheckpointEntry& entry : checkpoint.entries) {
    body += "entry " + std::to_string(entry.next_step) + " " + hex(entry.digest, 16) + " " +
            std::to_string(entry.wrong_total) + "\n";
  }
  body += "crc " + hex(fnv1a32(body), 8) + "\n";
  return body;
}

namespace {

// What parse_checkpoint has read so far: the fields, which of them were seen, and the line it is on.
struct CheckpointReader {
  std::string_view text;
  Checkpoint checkpoint;
  bool seen_rank = false, seen_world = false, seen_plan = false, seen_total = false, seen_crc = false;
  int line_no = 0;

  [[noreturn]] void fail(const std::string& what) const {
    throw CheckpointError("checkpoint line " + std::to_string(line_no) + ": " + what);
  }

  // One "key value..." line; `pos` is where it starts (the crc covers the text before it).
  void read_line(std::string_view line, size_t pos) {
    const auto words = split_words(line);
    if (words.empty()) fail("empty");
    const std::string_view key = words[0];
    const auto want = [&](size_t n) {
      if (words.size() != n) fail("'" + std::string(key) + "' takes " + std::to_string(n - 1) + " value(s)");
    };
    if (key == "rank") {
      want(2);
      checkpoint.rank = static_cast<int>(parse_number(words[1], 10, line_no, "rank"));
      seen_rank = true;
    } else if (key == "world_size") {
      want(2);
      checkpoint.world_size = static_cast<int>(parse_number(words[1], 10, line_no, "world_size"));
      seen_world = true;
    } else if (key == "plan") {
      want(2);
      checkpoint.plan = parse_number(words[1], 16, line_no, "plan");
      seen_plan = true;
    } else if (key == "total_steps") {
      want(2);
      checkpoint.total_steps = parse_number(words[1], 10, line_no, "total_steps");
      seen_total = true;
    } else if (key == "entry") {
      want(4);
      read_entry(words);
    } else if (key == "crc") {
      want(2);
      const uint64_t crc = parse_number(words[1], 16, line_no, "crc");
      if (crc != fnv1a32(text.substr(0, pos))) fail("crc mismatch (torn or edited file)");
      seen_crc = true;
    } else {
      fail("unknown key '" + std::string(key) + "'");
    }
  }

  void read_entry(const std::vector<std::string_view>& words) {
    CheckpointEntry entry;
    entry.next_step = parse_number(words[1], 10, line_no, "step");
    entry.digest = parse_number(words[2], 16, line_no, "digest");
    entry.wrong_total = parse_number(words[3], 10, line_no, "wrong count");
    if (!checkpoint.entries.empty() && entry.next_step <= checkpoint.entries.back().next_step) {
      fail("entries out of order");
    }
    if (checkpoint.entries.size() == Checkpoint::kMaxEntries) fail("more than 2 entries");
    checkpoint.entries.push_back(entry);
  }

  // After the last line: every field there, and consistent with the others.
  void check_whole() const {
    if (line_no == 0) throw CheckpointError("checkpoint: empty file");
    if (!seen_rank || !seen_world || !seen_plan || !seen_total) {
      throw CheckpointError("checkpoint: missing rank, world_size, plan or total_steps");
    }
    if (!seen_crc) throw CheckpointError("checkpoint: missing crc line (truncated file)");
    if (checkpoint.world_size <= 0 || checkpoint.rank >= checkpoint.world_size) {
      throw CheckpointError("checkpoint: rank " + std::to_string(checkpoint.rank) + " outside world size " +
                            std::to_string(checkpoint.world_size));
    }
    if (!checkpoint.entries.empty() && checkpoint.entries.back().next_step > checkpoint.total_steps) {
      throw CheckpointError("checkpoint: entry past total_steps");
    }
  }
};

}  // namespace

Checkpoint parse_checkpoint(std::string_view text) {
  CheckpointReader reader;
  reader.text = text;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) {
      throw CheckpointError("checkpoint line " + std::to_string(reader.line_no + 1) +
                            ": truncated (no newline)");
    }
    const std::string_view line = text.substr(pos, end - pos);
    ++reader.line_no;
    if (reader.seen_crc) reader.fail("text after crc");
    if (reader.line_no == 1) {
      if (line != kMagic) {
        throw CheckpointError("checkpoint line 1: expected '" + std::string(kMagic) + "', got '" +
                              std::string(line) + "'");
      }
    } else {
      reader.read_line(line, pos);
    }
    pos = end + 1;
  }
  reader.check_whole();
  return reader.checkpoint;
}

std::string checkpoint_path(const std::string& dir, int rank) {
  return (std::filesystem::path(dir) / ("rank" + std::to_string(rank) + ".ckpt")).string();
}

void save_checkpoint_file(const std::string& dir, const Checkpoint& checkpoint) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw CheckpointError("checkpoint: cannot create " + dir + ": " + ec.message());
  const std::string path = checkpoint_path(dir, checkpoint.rank);
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  const std::string text = format_checkpoint(checkpoint);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw CheckpointError("checkpoint: cannot write " + tmp + ": " + std::strerror(errno));
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      throw CheckpointError("checkpoint: write to " + tmp + " failed: " + std::strerror(errno));
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    throw CheckpointError("checkpoint: fsync/close " + tmp + " failed: " + std::strerror(errno));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    throw CheckpointError("checkpoint: rename to " + path + " failed: " + std::strerror(errno));
  }
}

std::optional<Checkpoint> load_checkpoint_file(const std::string& dir, int rank) {
  const std::string path = checkpoint_path(dir, rank);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (!std::filesystem::exists(path)) return std::nullopt;
    throw CheckpointError("checkpoint: cannot read " + path);
  }
  std::ostringstream text;
  text << in.rdbuf();
  try {
    return parse_checkpoint(text.str());
  } catch (const CheckpointError& error) {
    throw CheckpointError(path + ": " + error.what());
  }
}

uint64_t common_resume_step(const std::vector<uint64_t>& latest_steps) {
  if (latest_steps.empty()) return 0;
  return *std::min_element(latest_steps.begin(), latest_steps.end());
}

}  // namespace ncclfi::workload
