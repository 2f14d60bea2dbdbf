#include "ib_ports.h"

#include <filesystem>
#include <fstream>

namespace ncclfi::cli {

namespace fs = std::filesystem;

int active_ib_ports(const std::string& class_dir) {
  int active = 0;
  std::error_code ec;
  for (const auto& device : fs::directory_iterator(class_dir, ec)) {
    std::error_code port_ec;
    for (const auto& port : fs::directory_iterator(device.path() / "ports", port_ec)) {
      std::ifstream state(port.path() / "state");
      std::string line;
      // The kernel writes "<ib_port_state>: <NAME>" (drivers/infiniband/core/sysfs.c, state_show).
      if (std::getline(state, line) && line.find("ACTIVE") != std::string::npos) ++active;
    }
  }
  return active;
}

std::string too_few_ib_ports(int wanted, const std::string& class_dir) {
  if (wanted <= 0) return "";
  const int found = active_ib_ports(class_dir);
  if (found >= wanted) return "";
  return "needs " + std::to_string(wanted) + " active InfiniBand/RoCE port" + (wanted == 1 ? "" : "s") +
         ": " + class_dir + " lists " + std::to_string(found);
}

}  // namespace ncclfi::cli
