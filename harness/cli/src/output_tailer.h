// Follows a file that another process appends to (a rank's captured output, events.jsonl) and hands
// out its complete lines as they appear, so classifiers stamp them close to when they were written.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace ncclfi::cli {

class OutputTailer {
 public:
  explicit OutputTailer(std::string path, long start_offset = 0);
  OutputTailer(OutputTailer&&) noexcept;
  OutputTailer& operator=(OutputTailer&&) = delete;
  OutputTailer(const OutputTailer&) = delete;
  ~OutputTailer();

  // The complete lines written since the last call (without their newline).
  std::vector<std::string> read_lines();
  // At the end: also the last line when it lacks a newline.
  std::vector<std::string> read_rest();
  const std::string& path() const { return path_; }
  long offset() const { return offset_; }  // bytes consumed (complete lines and the held partial)
  // Current size of `path` (0 when missing): where a later tailer should start.
  static long file_size(const std::string& path);

 private:
  std::string path_;
  long offset_;
  std::FILE* file_ = nullptr;
  std::string partial_;
};

}  // namespace ncclfi::cli
