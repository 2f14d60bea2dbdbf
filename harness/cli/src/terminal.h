// Whether ncclfi's console output is coloured: `--color auto|always|never` (default auto), and in auto
// mode the NO_COLOR convention (https://no-color.org: set and not empty turns colour off) and whether
// the stream is a terminal. main() sets the mode once, before any command runs; every coloured output
// asks use_color().
#pragma once

#include <string>

namespace ncclfi::cli {

enum class ColorMode { kAuto, kAlways, kNever };

// "auto", "always", "never" (the --color choices); throws std::invalid_argument for anything else.
ColorMode parse_color_mode(const std::string& text);
void set_color_mode(ColorMode mode);
// For output written to file descriptor `fd` (STDOUT_FILENO, STDERR_FILENO).
bool use_color(int fd);

}  // namespace ncclfi::cli
