// The console's two decisions: whether output is coloured, and how wide it may be.
// Colour: `--color auto|always|never` (default auto), and in auto mode the NO_COLOR convention
// (https://no-color.org: set and not empty turns colour off) and whether the stream is a terminal. main()
// sets the mode once, before any command runs; every coloured output asks use_color().
// Width: every console writer that lays text out asks output_width() or wrap_width(), nothing else.
#pragma once

#include <cstddef>
#include <string>

namespace ncclfi::cli {

enum class ColorMode { kAuto, kAlways, kNever };

// "auto", "always", "never" (the --color choices); throws std::invalid_argument for anything else.
ColorMode parse_color_mode(const std::string& text);
void set_color_mode(ColorMode mode);
// For output written to file descriptor `fd` (STDOUT_FILENO, STDERR_FILENO).
bool use_color(int fd);

// The columns output to `fd` may fill: the terminal's width (ioctl TIOCGWINSZ) when `fd` is a terminal,
// else $COLUMNS when it is a number of at least 20, else 0: no limit. A pipe or a file has no width of
// its own, and what goes there (a CI log, grep) keeps whole lines rather than text cut at a guess.
// Asked at each use, so a resized terminal is followed.
size_t output_width(int fd);
// The width for text that wraps without losing anything (lists, paragraphs): output_width(), or 80 where
// that is 0.
size_t wrap_width(int fd);
inline constexpr size_t kDefaultWrapWidth = 80;

}  // namespace ncclfi::cli
