#include "ncclfi/bounded_input.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>
#include <vector>

namespace ncclfi {

JsonInputError::JsonInputError(std::string pointer, std::string expected, std::string found)
    : std::runtime_error(
          printable((pointer.empty() ? "/" : pointer) + ": expected " + expected + ", got " + found)),
      pointer_(std::move(pointer)),
      expected_(std::move(expected)),
      found_(std::move(found)) {}

namespace {

using json = nlohmann::json;

// Where the parser is, to name a duplicate key by its pointer: one frame per open container.
class PathTracker {
 public:
  // An element begins (a value, or a container's start): an array counts it.
  void element() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
  }
  void open(bool array) { frames_.push_back(Frame{array, -1, {}, {}}); }
  void close() {
    if (!frames_.empty()) frames_.pop_back();
  }
  // A key of the innermost object: false when that object already had it.
  bool key(const std::string& k) {
    if (frames_.empty() || frames_.back().array) return true;
    frames_.back().key = k;
    return frames_.back().keys.insert(k).second;
  }
  std::string pointer() const {
    json::json_pointer p;
    for (const auto& f : frames_) p = f.array ? p / static_cast<size_t>(f.index) : p / f.key;
    return p.to_string();
  }

 private:
  struct Frame {
    bool array;
    long index;
    std::string key;
    std::set<std::string> keys;
  };
  std::vector<Frame> frames_;
};

std::string depth_text(size_t depth) {
  return "at most " + std::to_string(depth) + " levels of nesting";
}

}  // namespace

json parse_json_input(std::string_view text, const JsonInputRules& rules) {
  PathTracker path;
  auto callback = [&](int depth, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        path.element();
        // Thrown before the parser goes deeper: a file of 200 MB of '[' stops at the limit.
        if (static_cast<size_t>(depth) >= rules.max_depth)
          throw JsonInputError(path.pointer(), depth_text(rules.max_depth), "deeper nesting");
        path.open(event == json::parse_event_t::array_start);
        break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        path.close();
        break;
      case json::parse_event_t::key:
        if (!path.key(parsed.get<std::string>()) && rules.reject_duplicate_keys)
          throw JsonInputError(path.pointer(), "each key once in an object", "a duplicate key");
        break;
      case json::parse_event_t::value:
        path.element();
        break;
    }
    return true;
  };
  try {
    return json::parse(text.begin(), text.end(), callback);
  } catch (const json::parse_error& e) {
    throw JsonInputError("", "valid JSON", "a syntax error at byte " + std::to_string(e.byte));
  } catch (const json::exception& e) {  // out_of_range: a number like 1e400
    std::string what = e.what();
    const size_t bracket = what.find("] ");
    throw JsonInputError("", "valid JSON with numbers in range",
                         bracket == std::string::npos ? what : what.substr(bracket + 2));
  }
}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 && c != '\n' && c != '\t') {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

std::string read_regular_file(const std::string& path, size_t max_bytes, std::string& text) {
  text.clear();
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return std::string("unreadable (open: ") + std::strerror(errno) + ")";
  struct stat st {};
  std::string problem;
  if (::fstat(fd, &st) != 0) {
    problem = std::string("unreadable (fstat: ") + std::strerror(errno) + ")";
  } else if (!S_ISREG(st.st_mode)) {
    problem = S_ISFIFO(st.st_mode)  ? "not a regular file (a FIFO)"
              : S_ISDIR(st.st_mode) ? "not a regular file (a directory)"
                                    : "not a regular file";
  } else if (static_cast<unsigned long long>(st.st_size) > max_bytes) {
    problem = "larger than " + std::to_string(max_bytes) + " bytes (" + std::to_string(st.st_size) + ")";
  } else {
    text.resize(static_cast<size_t>(st.st_size));
    size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = ::read(fd, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        problem = std::string("unreadable (read: ") + std::strerror(errno) + ")";
        break;
      }
      if (n == 0) break;  // shrank while read: parse what is there
      done += static_cast<size_t>(n);
    }
    text.resize(done);
  }
  ::close(fd);
  if (!problem.empty()) text.clear();
  return problem;
}

}  // namespace ncclfi
