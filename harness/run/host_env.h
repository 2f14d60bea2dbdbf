// What launching a job reads from this host: ncclfi's own environment, and a free TCP port for the
// job's rendezvous.
#pragma once

#include <map>
#include <string>

namespace ncclfi::cli {

// ncclfi's environment as a map.
std::map<std::string, std::string> current_environment();
// A TCP port free on 127.0.0.1 now (bound then released).
int pick_free_port();

}  // namespace ncclfi::cli
