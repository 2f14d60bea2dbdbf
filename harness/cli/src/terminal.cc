#include "terminal.h"

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

}  // namespace ncclfi::cli
