// api pcie_downgrade: NCCL's own topology shows the GPU's PCIe link trained down. At communicator creation
// the preload has NCCL dump the topology it detects, lowers the GPU's link width and/or speed in it, and
// points NCCL_TOPO_FILE at the result, so NCCL's graph search and INFO lines see the narrower link (a real
// downgrade is invisible to NCCL, which reads the maximum link width and speed from sysfs, not the trained
// ones).
#include "kind_support.h"

#include <array>

namespace ncclfi::kinds {
namespace {

// sysfs's wording of each generation's speed (index: generation - 1), which NCCL's topology parser reads.
constexpr std::array<std::string_view, 6> kSpeedOfGen = {
    "2.5 GT/s PCIe", "5.0 GT/s PCIe", "8.0 GT/s PCIe", "16.0 GT/s PCIe", "32.0 GT/s PCIe", "64.0 GT/s PCIe"};

constexpr ParamSpec kParams[] = {
    {.name = "width",
     .type = ParamType::kPositiveInt,
     .default_json = "4",
     .meaning = "lanes of the downgraded link: 1, 2, 4, 8 or 16 (a x16 link trained down to x4 is the usual "
                "case)"},
    {.name = "gen",
     .type = ParamType::kPositiveInt,
     .absent = "the link's own generation",
     .meaning = "PCIe generation of the downgraded link, 1-6 (2.5-64 GT/s)"}};

FaultAction resolve(const ParamReader& p) {
  TopologyChange change;
  const uint64_t width = p.integer("width");
  if (width > 16 || (width & (width - 1)) != 0) p.fail("width", "1, 2, 4, 8 or 16 lanes");
  change.pcie_width = static_cast<int>(width);
  if (p.has("gen")) {
    const uint64_t gen = p.integer("gen");
    if (gen > kSpeedOfGen.size()) p.fail("gen", "a PCIe generation from 1 to 6");
    change.pcie_speed = std::string(kSpeedOfGen[gen - 1]);
  }
  return ApiAction{change};
}

}  // namespace

extern const FaultKindSpec kApiPcieDowngrade;
constinit const FaultKindSpec kApiPcieDowngrade{Layer::kApi,
                                                "pcie_downgrade",
                                                "at communicator creation: NCCL's topology shows the GPU's "
                                                "PCIe link narrower/slower (NCCL_TOPO_FILE from "
                                                "the detected one)",
                                                kApiInit,
                                                kParams,
                                                resolve};

}  // namespace ncclfi::kinds
