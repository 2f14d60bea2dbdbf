#include "report_text.h"

#include "run_record.h"

namespace ncclfi::harness {
namespace {

// Length of the valid UTF-8 sequence at s[i], or 0 if it is not one.
size_t utf8_sequence(std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (len == 0 || i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  }
  return len;
}

}  // namespace

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 16);
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      size_t len = utf8_sequence(text, i);
      if (len == 0) {
        out += "\xEF\xBF\xBD";
        ++i;
      } else {
        out.append(text.substr(i, len));
        i += len;
      }
      continue;
    }
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      case '\t':
        out += "&#9;";
        break;
      case '\n':
        out += "&#10;";
        break;
      case '\r':
        out += "&#13;";
        break;
      default:
        if (c >= 0x20 && c != 0x7F) out += static_cast<char>(c);  // other controls are not XML
    }
    ++i;
  }
  return out;
}

std::optional<double> run_seconds(const RunRecord& record) {
  const History& h = record.history;
  if (h.end_ns > h.start_ns && h.start_ns > 0) return static_cast<double>(h.end_ns - h.start_ns) / 1e9;
  return std::nullopt;
}

}  // namespace ncclfi::harness
