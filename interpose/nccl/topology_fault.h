// nvlink_down and pcie_downgrade: what the node looks like to NCCL, changed at communicator creation, before
// NCCL reads its environment and detects its topology (both are read once per process, at the first init).
#pragma once

#include <optional>
#include <string>

#include <nccl.h>
#include <nlohmann/json.hpp>

#include "ncclfi/fault_action.h"

namespace ncclfi::preload {

// The text of an NCCL topology XML (NCCL_TOPO_DUMP_FILE's format) with the PCIe link of the device at
// `bus_id` ("0000:19:00.0", any case) set to `width` lanes and/or `speed` ("16.0 GT/s PCIe"). nullopt when
// no <pci> element has that bus id.
std::optional<std::string> lower_pcie_link(const std::string& xml, const std::string& bus_id,
                                           std::optional<int> width, const std::optional<std::string>& speed);

// Carries the change out in this process and describes it in `extra` (the injection event's fields);
// returns "" when done, else why not (the job then goes on unchanged). `dir`: where the topology files go.
std::string apply_topology_change(const TopologyChange& change, const std::string& dir, int rank,
                                  nlohmann::json& extra);

}  // namespace ncclfi::preload
