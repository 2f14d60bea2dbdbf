#include "quiet_net_plugin.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "launch/launcher_spec.h"

namespace ncclfi::cli {
namespace fs = std::filesystem;

QuietNetPlugin::QuietNetPlugin(const Scenario& s, const Installation& install,
                               const std::map<std::string, std::string>& parent_env) {
  if (!s.layer_net || !ranks_on_this_host(s) || !ranks_run_quiet(s, parent_env)) return;
  // mkdtemp: private (0700) and unguessable, so nobody else can plant a library where the ranks look.
  std::string pattern = (fs::temp_directory_path() / "nccl-net.XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("cannot create a directory for the net plugin (" + pattern +
                             "): " + std::strerror(errno));
  }
  dir_ = pattern;
  const std::string target = install.lib_dir + "/libnccl-net-ncclfi.so";
  if (::symlink(target.c_str(), (dir_ + "/libnccl-net.so").c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::error_code ec;
    fs::remove_all(dir_, ec);
    throw std::runtime_error("cannot link " + dir_ + "/libnccl-net.so to " + target + ": " + why);
  }
}

QuietNetPlugin::~QuietNetPlugin() {
  if (dir_.empty()) return;
  std::error_code ec;
  fs::remove_all(dir_, ec);  // the link and the directory; the shim itself is untouched
}

}  // namespace ncclfi::cli
