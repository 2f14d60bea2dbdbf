// `requires.ib_ports`: how many InfiniBand/RoCE ports this host has up, as the kernel lists them, so a
// scenario that needs real HCA ports (an IB port failover between two of them) skips where there are fewer.
#pragma once

#include <string>

namespace ncclfi::cli {

// The ports under `class_dir` (/sys/class/infiniband: <device>/ports/<n>/state) whose state reads ACTIVE
// ("4: ACTIVE", as ibstat's "State: Active"). A missing directory is none.
int active_ib_ports(const std::string& class_dir = "/sys/class/infiniband");

// "" when the host has at least `wanted` such ports; else why not:
// "needs 2 active InfiniBand/RoCE ports: /sys/class/infiniband lists 0".
std::string too_few_ib_ports(int wanted, const std::string& class_dir = "/sys/class/infiniband");

}  // namespace ncclfi::cli
