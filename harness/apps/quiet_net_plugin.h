// Where the ranks of a quiet run (labs, drills, NCCLFI_QUIET) find the net shim. NCCL writes the path of
// the net plugin it loaded under NCCL_DEBUG=INFO ("NCCL_NET_PLUGIN set by environment to PATH",
// "Successfully loaded external network plugin PATH", "Unloading plugin PATH"): with NCCL_NET_PLUGIN
// naming ncclfi's library, every rank's log would say who made the fault. Instead NCCL is left to try
// the name it tries by default, libnccl-net.so, in a private directory of a neutral name put first on the
// ranks' LD_LIBRARY_PATH, where that name links to the shim: the lines then read as those of a cluster
// with an installed plugin ("Successfully loaded external network plugin
// /tmp/nccl-net.Ab12Cd/libnccl-net.so"). Only where every rank runs on this host (ranks_on_this_host):
// other hosts have no such directory.
#pragma once

#include <map>
#include <string>

#include "launch/launch_context.h"
#include "scenario.h"

namespace ncclfi::cli {

class QuietNetPlugin {
 public:
  // Makes the directory when the run needs it (a quiet run whose net layer is on, every rank here); else
  // nothing. Throws std::runtime_error when it cannot be made.
  QuietNetPlugin(const Scenario& s, const Installation& install,
                 const std::map<std::string, std::string>& parent_env);
  ~QuietNetPlugin();
  QuietNetPlugin(const QuietNetPlugin&) = delete;
  QuietNetPlugin& operator=(const QuietNetPlugin&) = delete;
  // The directory (LaunchContext::net_plugin_dir), or empty.
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

}  // namespace ncclfi::cli
