#include "terminal.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>

namespace ncclfi::cli {
namespace {

ColorMode g_mode = ColorMode::kAuto;  // written once by main() before any command runs

}  // namespace

ColorMode parse_color_mode(const std::string& text) {
  if (text == "auto") return ColorMode::kAuto;
  if (text == "always") return ColorMode::kAlways;
  if (text == "never") return ColorMode::kNever;
  throw std::invalid_argument("--color " + text + ": expected auto, always or never");
}

void set_color_mode(ColorMode mode) {
  g_mode = mode;
}

bool use_color(int fd) {
  switch (g_mode) {
    case ColorMode::kAlways:
      return true;
    case ColorMode::kNever:
      return false;
    case ColorMode::kAuto:
      break;
  }
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color != nullptr && *no_color != '\0') return false;
  return isatty(fd) != 0;
}

size_t output_width(int fd) {
  winsize size{};
  if (isatty(fd) != 0 && ioctl(fd, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  // Below 20 columns nothing is laid out usefully; such a value is a mistake, not a wish.
  if (const char* columns = std::getenv("COLUMNS")) {
    char* end = nullptr;
    const long n = std::strtol(columns, &end, 10);
    if (end != columns && *end == '\0' && n >= 20 && n <= 10000) return static_cast<size_t>(n);
  }
  return 0;
}

size_t wrap_width(int fd) {
  const size_t width = output_width(fd);
  return width == 0 ? kDefaultWrapWidth : width;
}

}  // namespace ncclfi::cli
