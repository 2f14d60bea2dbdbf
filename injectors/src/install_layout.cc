// Where ncclfi's own shared libraries are (install_layout.h).
#include "ncclfi/install_layout.h"

#include <filesystem>

namespace ncclfi {

std::string private_lib_dir(const std::string& prefix) {
  const std::filesystem::path installed = std::filesystem::path(prefix) / "lib" / "ncclfi";
  std::error_code ec;
  if (std::filesystem::is_directory(installed, ec)) return installed.string();
  return (std::filesystem::path(prefix) / "lib").string();
}

}  // namespace ncclfi
