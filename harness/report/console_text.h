// Laying text out in columns for the console: its display width, padding, clipping and word wrapping.
// The width itself comes from terminal.h (output_width, wrap_width); these only obey it.
#pragma once

#include <cstddef>
#include <string>

namespace ncclfi::harness {

// `text` with every control character written out, so that what a rank printed or a file held cannot
// move the cursor, recolour or retitle the operator's terminal: C0 bytes and DEL as `\xNN` (a tab as
// `\t`, a newline as `\n`), C1 code points (U+0080 to U+009F, ESC's 8-bit forms) as `\u00NN`. Other
// text, UTF-8 included, is kept.
std::string terminal_safe(const std::string& text);
// Display width of UTF-8 text (counts code points; our text is ASCII plus the odd symbol).
size_t display_width(const std::string& text);
// `text` padded with spaces to `width` columns (unchanged when it is as wide or wider).
std::string pad(const std::string& text, size_t width);
// `text` cut to at most `width` columns, ending in "..." when it was cut.
std::string clip(const std::string& text, size_t width);
// `text` word-wrapped into lines of at most `width` columns, each beginning with `indent` spaces (the
// first one with `first_indent`), each ending in "\n". A word longer than a line is cut into pieces.
std::string wrap(const std::string& text, size_t width, size_t indent, size_t first_indent);
inline std::string wrap(const std::string& text, size_t width, size_t indent = 0) {
  return wrap(text, width, indent, indent);
}

}  // namespace ncclfi::harness
