#include "topology_fault.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "cuda_driver.h"
#include "real_symbol.h"

namespace ncclfi::preload {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// Sets attribute `name` of the start tag text `tag` (`<pci ... >`), adding it when absent.
void set_attribute(std::string& tag, const std::string& name, const std::string& value) {
  const std::string key = " " + name + "=\"";
  const size_t at = tag.find(key);
  if (at == std::string::npos) {
    const size_t close = tag.find_last_of('>');
    const size_t insert = close > 0 && tag[close - 1] == '/' ? close - 1 : close;
    tag.insert(insert, key + value + "\"");
    return;
  }
  const size_t begin = at + key.size();
  const size_t end = tag.find('"', begin);
  tag.replace(begin, end - begin, value);
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The PCI address of the calling thread's current GPU (the one the communicator is being created on).
std::string current_gpu(int* device, std::string* bus_id) {
  std::string error;
  const CudaDriver* cu = cuda_driver(&error);
  if (cu == nullptr) return error;
  if (!cu->pci_missing.empty()) return "the CUDA driver lacks " + cu->pci_missing;
  CUdevice dev = 0;
  if (cu->ctx_get_device(&dev) != CUDA_SUCCESS) return "no current CUDA device";
  char id[32] = {};
  if (cu->device_get_pci_bus_id(id, sizeof id, dev) != CUDA_SUCCESS) return "no PCI address for the device";
  *device = static_cast<int>(dev);
  *bus_id = id;
  return "";
}

// Has NCCL detect and dump this node's topology, as it will for the job's communicator: a throwaway
// one-GPU communicator on the same device, with NCCL_TOPO_DUMP_FILE set only for its creation.
std::string dump_detected_topology(int device, const std::string& path) {
  using InitAllFn = ncclResult_t (*)(ncclComm_t*, int, const int*);
  using DestroyFn = ncclResult_t (*)(ncclComm_t);
  static RealSymbol<InitAllFn> init_all("ncclCommInitAll");
  static RealSymbol<DestroyFn> destroy("ncclCommDestroy");
  if (init_all.get() == nullptr || destroy.get() == nullptr) return "the loaded NCCL lacks ncclCommInitAll";
  const char* before = std::getenv("NCCL_TOPO_DUMP_FILE");
  const std::string kept = before != nullptr ? before : "";
  setenv("NCCL_TOPO_DUMP_FILE", path.c_str(), 1);
  ncclComm_t comm = nullptr;
  const ncclResult_t rc = init_all.get()(&comm, 1, &device);
  if (rc == ncclSuccess) destroy.get()(comm);
  if (before != nullptr) {
    setenv("NCCL_TOPO_DUMP_FILE", kept.c_str(), 1);
  } else {
    unsetenv("NCCL_TOPO_DUMP_FILE");
  }
  if (rc != ncclSuccess) return "NCCL could not create the probe communicator (" + std::to_string(rc) + ")";
  return "";
}

std::string lower_pcie(const TopologyChange& change, const std::string& dir, int rank,
                       nlohmann::json& extra) {
  int device = -1;
  std::string bus_id;
  if (std::string why = current_gpu(&device, &bus_id); !why.empty()) return why;
  const std::string base = dir + "/topology-rank" + std::to_string(rank);
  const std::string detected = base + "-detected.xml";
  const std::string lowered = base + "-downgraded.xml";
  if (std::string why = dump_detected_topology(device, detected); !why.empty()) return why;
  const auto xml = read_file(detected);
  if (!xml) return "NCCL wrote no topology to " + detected;
  const auto changed = lower_pcie_link(*xml, bus_id, change.pcie_width, change.pcie_speed);
  if (!changed) return "the GPU " + bus_id + " is not in NCCL's topology " + detected;
  std::ofstream out(lowered, std::ios::binary | std::ios::trunc);
  out << *changed;
  out.close();
  if (!out) return "cannot write " + lowered;
  setenv("NCCL_TOPO_FILE", lowered.c_str(), 1);
  extra["gpu"] = bus_id;
  extra["topology"] = lowered;
  if (change.pcie_width) extra["pcie_width"] = *change.pcie_width;
  if (change.pcie_speed) extra["pcie_speed"] = *change.pcie_speed;
  return "";
}

}  // namespace

std::optional<std::string> lower_pcie_link(const std::string& xml, const std::string& bus_id,
                                           std::optional<int> width,
                                           const std::optional<std::string>& speed) {
  const std::string wanted = "busid=\"" + lower(bus_id) + "\"";
  for (size_t at = xml.find("<pci "); at != std::string::npos; at = xml.find("<pci ", at + 1)) {
    const size_t end = xml.find('>', at);
    if (end == std::string::npos) return std::nullopt;
    std::string tag = xml.substr(at, end + 1 - at);
    if (lower(tag).find(wanted) == std::string::npos) continue;
    if (width) set_attribute(tag, "link_width", std::to_string(*width));
    if (speed) set_attribute(tag, "link_speed", *speed);
    return xml.substr(0, at) + tag + xml.substr(end + 1);
  }
  return std::nullopt;
}

std::string apply_topology_change(const TopologyChange& change, const std::string& dir, int rank,
                                  nlohmann::json& extra) {
  if (change.p2p_off) {
    // NCCL reads it once, at its first communicator: set now, it holds for the rest of the process.
    setenv("NCCL_P2P_DISABLE", "1", 1);
    extra["env"] = "NCCL_P2P_DISABLE=1";
  }
  if (change.pcie_width || change.pcie_speed) return lower_pcie(change, dir, rank, extra);
  return "";
}

}  // namespace ncclfi::preload
