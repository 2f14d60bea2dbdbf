// Reading input that someone else wrote (plans, scenarios, event lines) with limits, so that no file
// can hang, exhaust or crash the process reading it. One place for every such limit; docs/robustness.md
// lists them and why.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ncclfi {

// Plans, scenarios and event lines are a few kilobytes and a few levels deep. Deeper documents were
// only ever attacks: printing one (a verdict holds every event) recursed once per level and crashed.
constexpr size_t kMaxJsonDepth = 64;
// A plan or scenario is read whole before it is parsed: 16 MiB is a thousand times the largest real one
// and keeps a mistaken or hostile file (a 1 GB plan cost every rank 27 s and 4 GB) from costing more.
constexpr size_t kMaxInputFileBytes = 16 << 20;

// Why a text is not acceptable JSON: where (a JSON pointer, "" for the whole text) and what.
class JsonInputError : public std::runtime_error {
 public:
  JsonInputError(std::string pointer, std::string expected, std::string found);
  const std::string& pointer() const { return pointer_; }
  const std::string& expected() const { return expected_; }
  const std::string& found() const { return found_; }

 private:
  std::string pointer_, expected_, found_;
};

struct JsonInputRules {
  size_t max_depth = kMaxJsonDepth;
  bool reject_duplicate_keys = true;  // {"a":1,"a":2}: which one was meant is a guess; say so instead
};

// Parses `text` as one JSON document within `rules`. Throws JsonInputError for syntax errors (with
// the byte), numbers out of range (1e400), nesting deeper than max_depth and duplicate keys (with
// the key's pointer). Never recurses per level of the input.
nlohmann::json parse_json_input(std::string_view text, const JsonInputRules& rules = {});

// `text` with control characters and NUL written as \u00XX, for messages (a NUL in a C string ends it).
std::string printable(std::string_view text);

// Reads a regular file of at most `max_bytes` without ever blocking: opened with O_NONBLOCK, checked
// with fstat (a FIFO, a device or a directory is refused before any read), then read. Returns "" and
// fills `text`, or the reason it was refused ("not a regular file (a FIFO)", "larger than ...").
std::string read_regular_file(const std::string& path, size_t max_bytes, std::string& text);

}  // namespace ncclfi
