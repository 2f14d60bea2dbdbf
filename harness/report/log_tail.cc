#include "log_tail.h"

#include <fstream>

namespace ncclfi::harness {
namespace {

constexpr std::streamoff kTailBytes = 64 * 1024;  // enough for a few lines, however long the log

// The line without control characters; an ANSI escape sequence ("\033[31m") goes whole, not only its ESC.
std::string printable(const std::string& line) {
  std::string out;
  for (size_t i = 0; i < line.size(); ++i) {
    const auto c = static_cast<unsigned char>(line[i]);
    if (c == 0x1B && i + 1 < line.size() && line[i + 1] == '[') {
      i += 2;
      while (i < line.size() && (line[i] < '@' || line[i] > '~')) ++i;  // up to its final byte
    } else if (c >= 0x20 && c != 0x7F) {
      out += line[i];
    } else if (c == '\t') {
      out += ' ';
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> last_log_lines(const std::string& path, size_t count) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  const std::streamoff from = size > kTailBytes ? size - kTailBytes : 0;
  in.seekg(from);
  std::string line;
  std::vector<std::string> lines;
  if (from > 0) std::getline(in, line);  // most likely the middle of a line
  while (std::getline(in, line)) {
    line = printable(line);
    if (line.find_first_not_of(' ') == std::string::npos) continue;
    lines.push_back(line);
    if (lines.size() > count) lines.erase(lines.begin());
  }
  return lines;
}

}  // namespace ncclfi::harness
