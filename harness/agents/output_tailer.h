// Follows a file that another process appends to (a rank's captured output, events.jsonl) and hands
// out its complete lines as they appear, so classifiers stamp them close to when they were written.
#pragma once

#include <cstddef>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace ncclfi::cli {

class OutputTailer {
 public:
  // Lines longer than `max_line_bytes` are handed out cut to that length and the rest of the line is
  // skipped (counted in truncated_lines()): a rank that prints one endless line costs bounded memory.
  explicit OutputTailer(std::string path, long start_offset = 0,
                        size_t max_line_bytes = kMaxLineBytesDefault);
  OutputTailer(OutputTailer&&) noexcept;
  OutputTailer& operator=(OutputTailer&&) = delete;
  OutputTailer(const OutputTailer&) = delete;
  ~OutputTailer();

  // What one read_lines call takes at most. The harness's poll loop also keeps the deadline and times
  // the proc faults: a job that logs faster than a starved harness can parse (4 ranks spinning on 2
  // busy CPUs wrote events for 46 s before one unbounded read caught up) must not hold the loop.
  static constexpr size_t kMaxBytesPerRead = 256 << 10;
  static constexpr size_t kMaxLineBytesDefault = 64 << 10;

  // The complete lines written since the last call (without their newline), from at most `max_bytes`
  // more of the file; the rest waits for the next call.
  std::vector<std::string> read_lines(size_t max_bytes = kMaxBytesPerRead);
  // At the end: everything left, and the last line when it lacks a newline.
  std::vector<std::string> read_rest();
  // The same, handed to `each` kMaxBytesPerRead at a time: a harness that lags far behind a fast
  // writer never holds the whole rest of the file at once.
  void read_rest(const std::function<void(const std::string&)>& each);
  const std::string& path() const { return path_; }
  long offset() const { return offset_; }  // bytes consumed (complete lines and the held partial)
  size_t truncated_lines() const { return truncated_lines_; }
  // What happened to the file behind the harness's back since it was opened, "" when nothing: it shrank
  // below what was already read (truncated) or another file took its name. Sticky: the first is kept.
  const std::string& tampered() const { return tampered_; }
  // Current size of `path` (0 when missing): where a later tailer should start.
  static long file_size(const std::string& path);

 private:
  std::string path_;
  long offset_;
  std::FILE* file_ = nullptr;
  std::string partial_;
  size_t max_line_bytes_;
  bool skipping_ = false;  // inside the rest of a line that was already handed out cut
  size_t truncated_lines_ = 0;
  std::string tampered_;

  void check_tampering();
  void take_lines(std::vector<std::string>& lines);
};

}  // namespace ncclfi::cli
