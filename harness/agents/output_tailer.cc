#include "output_tailer.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdint>

namespace ncclfi::cli {

OutputTailer::OutputTailer(std::string path, long start_offset, size_t max_line_bytes)
    : path_(std::move(path)), offset_(start_offset), max_line_bytes_(max_line_bytes) {}

OutputTailer::OutputTailer(OutputTailer&& other) noexcept
    : path_(std::move(other.path_)),
      offset_(other.offset_),
      file_(other.file_),
      partial_(std::move(other.partial_)),
      max_line_bytes_(other.max_line_bytes_),
      skipping_(other.skipping_),
      truncated_lines_(other.truncated_lines_),
      tampered_(std::move(other.tampered_)) {
  other.file_ = nullptr;
}

OutputTailer::~OutputTailer() {
  if (file_ != nullptr) std::fclose(file_);
}

long OutputTailer::file_size(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 ? static_cast<long>(st.st_size) : 0;
}

std::vector<std::string> OutputTailer::read_lines(size_t max_bytes) {
  std::vector<std::string> lines;
  if (file_ == nullptr) {
    file_ = std::fopen(path_.c_str(), "rb");
    if (file_ == nullptr) return lines;
    std::fseek(file_, offset_, SEEK_SET);
  }
  std::clearerr(file_);
  check_tampering();
  char buf[65536];
  size_t taken = 0;
  while (taken < max_bytes) {
    const size_t n = std::fread(buf, 1, std::min(sizeof buf, max_bytes - taken), file_);
    if (n == 0) break;
    partial_.append(buf, n);
    offset_ += static_cast<long>(n);
    taken += n;
    take_lines(lines);  // per chunk: the held partial never grows past one line's limit and a chunk
  }
  return lines;
}

void OutputTailer::check_tampering() {
  if (!tampered_.empty()) return;
  struct stat open_file {};
  if (fstat(fileno(file_), &open_file) != 0) return;
  if (open_file.st_size < offset_) {
    tampered_ = "shrank from " + std::to_string(offset_) + " to " + std::to_string(open_file.st_size) +
                " bytes while the harness read it (truncated)";
    return;
  }
  struct stat named {};
  if (stat(path_.c_str(), &named) != 0 || named.st_ino != open_file.st_ino ||
      named.st_dev != open_file.st_dev)
    tampered_ = "was removed or replaced by another file while the harness read it";
}

void OutputTailer::take_lines(std::vector<std::string>& lines) {
  size_t start = 0, nl;
  while ((nl = partial_.find('\n', start)) != std::string::npos) {
    if (skipping_) {
      skipping_ = false;  // the end of a line already handed out cut
    } else {
      const size_t length = nl - start;
      if (length > max_line_bytes_) ++truncated_lines_;
      lines.push_back(partial_.substr(start, std::min(length, max_line_bytes_)));
    }
    start = nl + 1;
  }
  partial_.erase(0, start);
  if (skipping_) {
    partial_.clear();
  } else if (partial_.size() > max_line_bytes_) {
    ++truncated_lines_;
    lines.push_back(partial_.substr(0, max_line_bytes_));
    partial_.clear();
    skipping_ = true;
  }
}

std::vector<std::string> OutputTailer::read_rest() {
  auto lines = read_lines(SIZE_MAX);
  if (!partial_.empty() && !skipping_) {
    lines.push_back(partial_);
    partial_.clear();
  }
  return lines;
}

void OutputTailer::read_rest(const std::function<void(const std::string&)>& each) {
  for (long before = -1; before != offset_;) {
    before = offset_;
    for (const auto& line : read_lines()) each(line);
  }
  if (!partial_.empty() && !skipping_) {
    each(partial_);
    partial_.clear();
  }
}

}  // namespace ncclfi::cli
