#include "console_text.h"

#include <cstdio>
#include <sstream>

namespace ncclfi::harness {
namespace {

bool continuation_byte(char ch) {
  return (static_cast<unsigned char>(ch) & 0xC0) == 0x80;
}

// The first `columns` columns of `text`, never splitting a UTF-8 sequence.
std::string first_columns(const std::string& text, size_t columns) {
  size_t seen = 0, i = 0;
  for (; i < text.size(); ++i) {
    if (continuation_byte(text[i])) continue;
    if (seen == columns) break;
    ++seen;
  }
  return text.substr(0, i);
}

}  // namespace

std::string terminal_safe(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  char hex[8];
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c == 0x7f) {
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9f) {  // a C1 control in UTF-8
      std::snprintf(hex, sizeof hex, "\\u00%02x", static_cast<unsigned char>(text[++i]));
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

size_t display_width(const std::string& text) {
  size_t n = 0;
  for (char ch : text) n += continuation_byte(ch) ? 0u : 1u;
  return n;
}

std::string pad(const std::string& text, size_t width) {
  const size_t w = display_width(text);
  return w >= width ? text : text + std::string(width - w, ' ');
}

std::string clip(const std::string& text, size_t width) {
  if (display_width(text) <= width) return text;
  if (width <= 3) return first_columns(text, width);
  return first_columns(text, width - 3) + "...";
}

std::string wrap(const std::string& text, size_t width, size_t indent, size_t first_indent) {
  std::istringstream words(text);
  std::string out, line(first_indent, ' '), word;
  size_t margin = first_indent;  // the current line's indent: a line holding only it is empty
  auto flush = [&] {
    out += line + "\n";
    line = std::string(indent, ' ');
    margin = indent;
  };
  while (words >> word) {
    while (!word.empty()) {
      const bool empty = display_width(line) == margin;
      const size_t room = width > margin ? width - margin : 1;
      if (!empty && display_width(line) + 1 + display_width(word) > width) {
        flush();
      } else if (empty && display_width(word) > room) {  // longer than a whole line (a path): cut it
        const std::string piece = first_columns(word, room);
        line += piece;
        word.erase(0, piece.size());
        flush();
      } else {
        line += (empty ? "" : " ") + word;
        word.clear();
      }
    }
  }
  if (display_width(line) > margin) out += line + "\n";
  return out;
}

}  // namespace ncclfi::harness
