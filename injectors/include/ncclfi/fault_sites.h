// The five places on the path between GPUs where a fault strikes (NIC, switch, link, NVLink, PCIe), and for
// each the fault kinds that emulate it, at which layer, and how faithfully. `ncclfi list sites` prints the
// table (with the catalogue's scenarios that use each kind) and docs/faults.md contains it. The table is
// data in fault_sites.cc: a kind is added to a site by one line there.
#pragma once

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace ncclfi {

struct SiteEmulation {
  std::string_view layer;         // "verbs", "net", "api", "node", ... (a layer name, so a kind another part
  std::string_view kind;          // of the project adds is listed before it is registered here)
  std::string_view real;          // what the job meets exactly as in the real failure
  std::string_view approximated;  // what differs from the real failure
  bool planned = false;           // added by another part of the project: may be missing from this build
};

struct FaultSite {
  int number;
  std::string_view name;
  std::string_view real_failure;  // what happens on real hardware
  std::span<const SiteEmulation> emulations;
};

std::span<const FaultSite> fault_sites();

// True when the kind is in this build's registry.
bool fault_kind_registered(std::string_view layer, std::string_view kind);

// (layer, kind) -> the names of the scenarios whose faults use it.
using KindUses = std::map<std::pair<std::string, std::string>, std::vector<std::string>>;

std::string fault_sites_markdown(const KindUses& uses);
// The same tables without the scenarios column: what docs/faults.md holds, so that a new scenario does
// not make the docs stale.
std::string fault_sites_markdown();
nlohmann::json fault_sites_json(const KindUses& uses);

}  // namespace ncclfi
