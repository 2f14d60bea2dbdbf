#include "lab_artefacts.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <iomanip>
#include <random>
#include <sstream>

namespace ncclfi::cli::lab {

namespace {

// What one GPU of a node and the HCA beside it show (local rank i: GPU i, mlx5_i, as the IB persona
// names a rank's HCA), decided once from the truth; the writers only format it.
struct DeviceState {
  int rank = 0;            // the rank that ran on it
  size_t index = 0;        // its local rank
  std::string hca;         // mlx5_<index>
  bool port_down = false;  // nic
  uint64_t symbol_errors = 0, rcv_errors = 0, link_recoveries = 0, link_downed = 0;
  uint64_t xmit_wait = 0;             // ticks a port waited to send (congestion on its switch's side)
  int pcie_gen = 5, pcie_width = 16;  // current; the maximum is Gen5 x16 (H100 SXM5)
  int inactive_nvlink = -1;           // nvlink: the link that went down
  bool fell_off_bus = false;          // gpu_hang
};

struct NodeState {
  std::string host;
  std::vector<DeviceState> devices;  // by local rank
};

constexpr int kMaxPcieGen = 5, kMaxPcieWidth = 16, kNvlinks = 18;

std::string two_digits(int n) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%02d", n);
  return buf;
}

std::string gpu_uuid(const DeviceState& d) {
  return "GPU-5f3a9b1e-7c2d-4e8a-9b0f-" + two_digits(d.rank) + "1c2d3e4f5a6b";
}

// dmesg -T's time: "[Thu Dec  3 14:32:01 2026]" (util-linux dmesg --ctime, the kernel log a node keeps).
std::string ctime_stamp(int64_t wall_ns) {
  const time_t t = static_cast<time_t>(wall_ns / 1000000000);
  std::tm local{};
  localtime_r(&t, &local);
  std::ostringstream out;
  out << std::put_time(&local, "[%a %b %e %H:%M:%S %Y] ");
  return out.str();
}

// The GPU of local rank i of a node, its PCI bus: the slots of an HGX board (ncclfi-cpu-ring's busId).
std::string gpu_bus(size_t i) {
  static const char* const kBus[] = {"18", "2a", "3a", "5d", "9a", "ab", "ba", "db"};
  return kBus[i % 8];
}
// The HCA beside it, on the same PCIe switch.
std::string nic_pci(size_t i) {
  static const char* const kBus[] = {"1b", "2b", "3b", "5c", "9b", "ac", "bb", "dc"};
  return std::string("0000:") + kBus[i % 8] + ":00.0";
}
std::string gpu_pci(size_t i) {
  return "0000:" + gpu_bus(i) + ":00.0";
}
std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

// ibstat (infiniband-diags): "CA 'mlx4_0'", then "\tCA type:", "\tPort 1:", "\t\tState: Active",
// "\t\tPhysical state: LinkUp", "\t\tRate: 40", "\t\tLink layer: InfiniBand" (the output on
// kb.advancedclustering.com/kb/InfiniBand-Port-States, which also gives the states: Down with
// Physical state Polling when nothing answers at the other end of the cable).
std::string ibstat_ca(const DeviceState& n) {
  std::ostringstream out;
  out << "CA '" << n.hca << "'\n"
      << "\tCA type: MT4129\n"
      << "\tNumber of ports: 1\n"
      << "\tFirmware version: 28.39.1002\n"
      << "\tHardware version: 0\n"
      << "\tNode GUID: 0xa088c20300" << std::hex << std::setw(6) << std::setfill('0') << (0x1a2b00 + n.rank)
      << std::dec << "\n"
      << "\tSystem image GUID: 0xa088c20300" << std::hex << std::setw(6) << std::setfill('0')
      << (0x1a2b00 + n.rank) << std::dec << "\n"
      << "\tPort 1:\n"
      << "\t\tState: " << (n.port_down ? "Down" : "Active") << "\n"
      << "\t\tPhysical state: " << (n.port_down ? "Polling" : "LinkUp") << "\n"
      << "\t\tRate: " << (n.port_down ? 10 : 400) << "\n"
      << "\t\tBase lid: " << (n.port_down ? 0 : 100 + n.rank) << "\n"
      << "\t\tLMC: 0\n"
      << "\t\tSM lid: " << (n.port_down ? 0 : 1) << "\n"
      << "\t\tCapability mask: 0xa751e848\n"
      << "\t\tPort GUID: 0xa088c20300" << std::hex << std::setw(6) << std::setfill('0') << (0x1a2b00 + n.rank)
      << std::dec << "\n"
      << "\t\tLink layer: InfiniBand\n";
  return out.str();
}

// ibstat with no argument: every CA of the node, one after the other.
std::string ibstat(const NodeState& node) {
  std::string out;
  for (const DeviceState& d : node.devices) out += ibstat_ca(d);
  return out;
}

// perfquery (infiniband-diags) PortCounters: "# Port counters: Lid L port P (CapMask: 0x...)", then each
// field's name and a colon padded with dots to column 33 and the value, in the order of the
// PortCounters attribute (perfquery output as printed by infiniband-diags 2.x; e.g. the NVIDIA/Mellanox
// lab guides' "sudo perfquery" sample with PortXmitWait last).
std::string perfquery_port(const DeviceState& n) {
  std::ostringstream out;
  auto field = [&](const std::string& name, const std::string& value) {
    std::string key = name + ":";
    if (key.size() < 33) key += std::string(33 - key.size(), '.');
    out << key << value << "\n";
  };
  if (n.port_down) {  // no LID: the PMA cannot be reached through the fabric; the local port answers by CA
    out << "# Port counters: Lid 0 port 1 (CapMask: 0x1600)\n";
  } else {
    out << "# Port counters: Lid " << 100 + n.rank << " port 1 (CapMask: 0x1600)\n";
  }
  const auto num = [](uint64_t v) { return std::to_string(v); };
  field("PortSelect", "1");
  field("CounterSelect", "0x0000");
  field("SymbolErrorCounter", num(n.symbol_errors));
  field("LinkErrorRecoveryCounter", num(n.link_recoveries));
  field("LinkDownedCounter", num(n.link_downed));
  field("PortRcvErrors", num(n.rcv_errors));
  field("PortRcvRemotePhysicalErrors", "0");
  field("PortRcvSwitchRelayErrors", "0");
  field("PortXmitDiscards", "0");
  field("PortXmitConstraintErrors", "0");
  field("PortRcvConstraintErrors", "0");
  field("CounterSelect2", "0x00");
  field("LocalLinkIntegrityErrors", "0");
  field("ExcessiveBufferOverrunErrors", "0");
  field("QP1Dropped", "0");
  field("VL15Dropped", "0");
  const uint64_t base = 41000000ULL + static_cast<uint64_t>(n.rank) * 1733;
  field("PortXmitData", num(base * 4));
  field("PortRcvData", num(base * 4 + 977));
  field("PortXmitPkts", num(base / 16));
  field("PortRcvPkts", num(base / 16 + 13));
  field("PortXmitWait", num(n.xmit_wait));
  return out.str();
}

// perfquery per HCA (-C names the CA, -P its port), as an operator runs it on a node of several.
std::string perfquery(const NodeState& node) {
  std::string out;
  for (const DeviceState& d : node.devices) {
    out += (out.empty() ? "" : "\n") + std::string("$ perfquery -C ") + d.hca + " -P 1\n" + perfquery_port(d);
  }
  return out;
}

// The kernel's log (dmesg -T). Formats:
// - mlx5_core's port module events (drivers/net/ethernet/mellanox/mlx5/core/events.c): "Port module
//   event[error]: module %u, %s, %s" with "Cable error" and the error's text ("Bad or shorted
//   cable/module"), prefixed "mlx5_core <pci address>: " by dev_err;
// - the NVIDIA driver's Xid lines "NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>', name=<unknown>, ..."
//   (as dmesg shows them, e.g. gpud's Xid documentation), 74 for an NVLink error ("NVLink: fatal error
//   detected on link N(...)", seven registers) and 79 with "GPU has fallen off the bus." (NVIDIA's Xid
//   catalogue);
// - the PCI core's link report (drivers/pci/pci.c, __pcie_print_link_status): "%u.%03u Gb/s available
//   PCIe bandwidth, limited by %s x%d link at %s (capable of %u.%03u Gb/s with %s x%d link)", and AER's
//   corrected errors (drivers/pci/pcie/aer.c): "AER: Corrected error received: %s", "PCIe Bus Error:
//   severity=Corrected, type=Physical Layer, (Receiver ID)", "device [%04x:%04x] error
//   status/mask=%08x/%08x", "   [ 0] RxErr".
// One device's lines: its HCA's and its GPU's.
void device_dmesg(const DeviceState& n, int64_t boot_ns, int64_t fault_ns,
                  std::vector<std::pair<int64_t, std::string>>& lines) {
  const std::string nic = nic_pci(n.index), gpu = gpu_pci(n.index),
                    gpu_id = "PCI:0000:" + gpu_bus(n.index) + ":00";
  const int64_t probe_ns = boot_ns + static_cast<int64_t>(n.index) * 40000000LL;  // probed one after another
  auto line = [&](int64_t at, const std::string& text) { lines.emplace_back(at, text); };
  line(probe_ns, "mlx5_core " + nic + ": firmware version: 28.39.1002");
  line(probe_ns + 1200000000LL, "mlx5_core " + nic + ": Port module event: module 0, Cable plugged");
  if (n.pcie_gen < kMaxPcieGen || n.pcie_width < kMaxPcieWidth) {
    // pci_speed_string()'s names (drivers/pci/probe.c).
    static const char* const kSpeed[] = {
        "", "2.5 GT/s PCIe", "5.0 GT/s PCIe", "8.0 GT/s PCIe", "16.0 GT/s PCIe", "32.0 GT/s PCIe"};
    // Mb/s per lane after encoding, as PCIE_SPEED2MBS_ENC (8b/10b to Gen2, 128b/130b after).
    static const unsigned kLaneMbps[] = {0, 2000, 4000, 7876, 15753, 31507};
    const unsigned avail = kLaneMbps[n.pcie_gen] * static_cast<unsigned>(n.pcie_width);
    const unsigned capable = kLaneMbps[kMaxPcieGen] * static_cast<unsigned>(kMaxPcieWidth);
    char text[320];
    std::snprintf(text, sizeof text,
                  "pci %s: %u.%03u Gb/s available PCIe bandwidth, limited by %s x%d link at 0000:17:01.0 "
                  "(capable of %u.%03u Gb/s with %s x%d link)",
                  gpu.c_str(), avail / 1000, avail % 1000, kSpeed[n.pcie_gen], n.pcie_width, capable / 1000,
                  capable % 1000, kSpeed[kMaxPcieGen], kMaxPcieWidth);
    line(boot_ns + 1800000000LL, text);
    // The link retrains under load and its receiver keeps counting errors while the job runs.
    for (int i = 0; i < 3; ++i) {
      const int64_t at = fault_ns + static_cast<int64_t>(i) * 2700000000LL;
      line(at, "pcieport 0000:17:01.0: AER: Corrected error received: " + gpu);
      line(at, "nvidia " + gpu + ": PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)");
      line(at, "nvidia " + gpu + ":   device [10de:2330] error status/mask=00000001/0000e000");
      line(at, "nvidia " + gpu + ":    [ 0] " + std::string("RxErr") +
                   std::string(22 - 5, ' '));  // "   [%2d] %-22s"
    }
  }
  if (n.port_down) {
    // Each HCA has one port and its cable's module is that HCA's module 0.
    line(fault_ns, "mlx5_core " + nic +
                       ": Port module event[error]: module 0, Cable error, Bad or shorted cable/module");
  }
  if (n.inactive_nvlink >= 0) {
    line(fault_ns, "NVRM: Xid (" + gpu_id +
                       "): 74, pid='<unknown>', name=<unknown>, NVLink: fatal error detected on link " +
                       std::to_string(n.inactive_nvlink) + "(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)");
  }
  if (n.fell_off_bus) {
    line(fault_ns, "NVRM: GPU at " + gpu_id + ": " + gpu_uuid(n));
    line(fault_ns,
         "NVRM: Xid (" + gpu_id + "): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.");
    line(fault_ns, "NVRM: GPU " + gpu + ": GPU has fallen off the bus.");
  }
}

std::string dmesg(const NodeState& node, int64_t boot_ns, int64_t fault_ns) {
  std::vector<std::pair<int64_t, std::string>> lines;
  // What every node logged at boot: the same drivers, the same devices.
  lines.emplace_back(boot_ns + 2100000000LL,
                     "nvidia-nvlink: Nvlink Core is being initialized, major device number 510");
  lines.emplace_back(
      boot_ns + 2300000000LL,
      "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024");
  for (const DeviceState& d : node.devices) device_dmesg(d, boot_ns, fault_ns, lines);
  std::stable_sort(lines.begin(), lines.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::ostringstream out;
  for (const auto& [at, text] : lines) out << ctime_stamp(at) << text << "\n";
  return out.str();
}

// nvidia-smi -q, the GPU's PCI section: keys padded to column 42 then ": ", "GPU Link Info" with "PCIe
// Generation" and "Link Width", each with "Max" and "Current" (nvidia-smi -a output, e.g. the sample in
// zenn.dev/yuyakato/articles/12a19c019b1339, a Gen3 card reporting "Current : 1").
std::string nvidia_smi_q(const NodeState& n, int64_t at_ns) {
  std::ostringstream out;
  auto kv = [&](int indent, const std::string& key, const std::string& value) {
    std::string k = std::string(static_cast<size_t>(indent), ' ') + key;
    if (k.size() < 42) k += std::string(42 - k.size(), ' ');
    out << k << ": " << value << "\n";
  };
  const time_t t = static_cast<time_t>(at_ns / 1000000000);
  std::tm local{};
  localtime_r(&t, &local);
  std::ostringstream when;
  when << std::put_time(&local, "%a %b %e %H:%M:%S %Y");
  out << "\n==============NVSMI LOG==============\n\n";
  kv(0, "Timestamp", when.str());
  kv(0, "Driver Version", "550.54.15");
  kv(0, "CUDA Version", "12.4");
  out << "\n";
  kv(0, "Attached GPUs", std::to_string(n.devices.size()));
  for (const DeviceState& d : n.devices) {
    const size_t i = d.index;
    const std::string bus = upper(gpu_bus(i));
    out << "GPU 00000000:" << bus << ":00.0\n";
    kv(4, "Product Name", "NVIDIA H100 80GB HBM3");
    kv(4, "Product Brand", "NVIDIA");
    kv(4, "Persistence Mode", "Enabled");
    kv(4, "Minor Number", std::to_string(i));
    out << "    PCI\n";
    kv(8, "Bus", "0x" + bus);
    kv(8, "Device", "0x00");
    kv(8, "Domain", "0x0000");
    kv(8, "Device Id", "0x233010DE");
    kv(8, "Bus Id", "00000000:" + bus + ":00.0");
    kv(8, "Sub System Id", "0x16C110DE");
    out << "        GPU Link Info\n";
    out << "            PCIe Generation\n";
    kv(16, "Max", std::to_string(kMaxPcieGen));
    kv(16, "Current", std::to_string(d.pcie_gen));
    out << "            Link Width\n";
    kv(16, "Max", std::to_string(kMaxPcieWidth) + "x");
    kv(16, "Current", std::to_string(d.pcie_width) + "x");
  }
  return out.str();
}

// nvidia-smi nvlink -s ("GPU 0: NAME (UUID: ...)", then "\t Link N: 26.562 GB/s" or "\t Link N:
// <inactive>") and -e ("\t Link N: Replay Errors: 0", "Recovery Errors", "CRC Errors"; e.g. the
// nvidia-smi nvlink -e sample in NVIDIA/srt-slurm pull request 307).
std::string nvidia_smi_nvlink(const NodeState& n) {
  std::ostringstream out;
  out << "$ nvidia-smi nvlink -s\n";
  for (const DeviceState& d : n.devices) {
    out << "GPU " << d.index << ": NVIDIA H100 80GB HBM3 (UUID: " << gpu_uuid(d) << ")\n";
    for (int l = 0; l < kNvlinks; ++l) {
      out << "\t Link " << l << ": " << (l == d.inactive_nvlink ? "<inactive>" : "26.562 GB/s") << "\n";
    }
  }
  out << "\n$ nvidia-smi nvlink -e\n";
  for (const DeviceState& d : n.devices) {
    out << "GPU " << d.index << ": NVIDIA H100 80GB HBM3 (UUID: " << gpu_uuid(d) << ")\n";
    for (int l = 0; l < kNvlinks; ++l) {
      const bool bad = l == d.inactive_nvlink;
      out << "\t Link " << l << ": Replay Errors: " << (bad ? 37 : 0) << "\n";
      out << "\t Link " << l << ": Recovery Errors: " << (bad ? 4 : 0) << "\n";
      out << "\t Link " << l << ": CRC Errors: " << (bad ? 1291 : 0) << "\n";
    }
  }
  return out.str();
}

// lspci -vv of the GPU (pciutils ls-caps.c): "\t\tLnkCap:\tPort #0, Speed 32GT/s, Width x16, ..." and
// "\t\tLnkSta:\tSpeed 16GT/s (downgraded), Width x8 (downgraded)", "(downgraded)" where the status is
// below the capability (link_compare) and nothing where they are equal (e.g. cloudnetops.tech's "How to
// diagnose and fix PCIe link speed downgrade in Linux").
std::string lspci_vv_gpu(const DeviceState& n) {
  static const char* const kSpeed[] = {"", "2.5GT/s", "5GT/s", "8GT/s", "16GT/s", "32GT/s"};
  std::ostringstream out;
  out << gpu_bus(n.index) << ":00.0 3D controller: NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev a1)\n"
      << "\tSubsystem: NVIDIA Corporation Device 16c1\n"
      << "\tControl: I/O- Mem+ BusMaster+ SpecCycle- MemWINV- VGASnoop- ParErr- Stepping- SERR- FastB2B- "
         "DisINTx+\n"
      << "\tStatus: Cap+ 66MHz- UDF- FastB2B- ParErr- DEVSEL=fast >TAbort- <TAbort- <MAbort- >SERR- <PERR- "
         "INTx-\n"
      << "\tLatency: 0\n"
      << "\tInterrupt: pin A routed to IRQ 18\n"
      << "\tNUMA node: 0\n"
      << "\tCapabilities: [68] Express (v2) Endpoint, MSI 00\n"
      << "\t\tDevCap:\tMaxPayload 256 bytes, PhantFunc 0, Latency L0s unlimited, L1 <64us\n"
      << "\t\tLnkCap:\tPort #0, Speed " << kSpeed[kMaxPcieGen] << ", Width x" << kMaxPcieWidth
      << ", ASPM not supported\n"
      << "\t\t\tClockPM+ Surprise- LLActRep- BwNot- ASPMOptComp+\n"
      << "\t\tLnkCtl:\tASPM Disabled; RCB 64 bytes, Disabled- CommClk+\n"
      << "\t\t\tExtSynch- ClockPM+ AutWidDis- BWInt- AutBWInt-\n"
      << "\t\tLnkSta:\tSpeed " << kSpeed[n.pcie_gen] << (n.pcie_gen < kMaxPcieGen ? " (downgraded)" : "")
      << ", Width x" << n.pcie_width << (n.pcie_width < kMaxPcieWidth ? " (downgraded)" : "") << "\n"
      << "\t\t\tTrErr- Train- SlotClk+ DLActive- BWMgmt- ABWMgmt-\n"
      << "\t\tLnkCtl2: Target Link Speed: " << kSpeed[kMaxPcieGen] << ", EnterCompliance- SpeedDis-\n"
      << "\tKernel driver in use: nvidia\n"
      << "\tKernel modules: nvidiafb, nouveau, nvidia_drm, nvidia\n";
  return out.str();
}

// lspci -vv -d 10de: every GPU of the node, a blank line between devices as lspci writes them.
std::string lspci_vv(const NodeState& node) {
  std::string out;
  for (const DeviceState& d : node.devices) out += (out.empty() ? "" : "\n") + lspci_vv_gpu(d);
  return out;
}

// How the fault shows on its node. `s` is the strength (0-1).
void apply(DeviceState& n, const std::string& site, double s) {
  s = std::clamp(s, 0.05, 1.0);
  if (site == "nic") {
    n.port_down = true;
    n.link_downed = 1;
    n.link_recoveries = 2;
  } else if (site == "congestion") {
    n.xmit_wait = static_cast<uint64_t>(4.0e8 * s) + 91234567ULL;  // ticks waiting for credits, no errors
  } else if (site == "degraded_link") {
    n.symbol_errors = static_cast<uint64_t>(60000 * s) + 1729;
    n.rcv_errors = static_cast<uint64_t>(900 * s) + 57;
    n.link_recoveries = 3;
  } else if (site == "pcie") {
    n.pcie_gen = s > 0.5 ? 3 : 4;  // a stronger downgrade trained lower
    n.pcie_width = s > 0.5 ? 4 : 8;
  } else if (site == "nvlink") {
    n.inactive_nvlink = 4 + n.rank % 10;
  } else if (site == "gpu_hang") {
    n.fell_off_bus = true;
  }
}

}  // namespace

const std::vector<std::string>& fault_sites() {
  static const std::vector<std::string> sites = {"nic",       "congestion",    "degraded_link", "nvlink",
                                                 "pcie",      "host_hang",     "gpu_hang",      "dead_rank",
                                                 "bootstrap", "configuration", "none"};
  return sites;
}

bool is_fault_site(const std::string& site) {
  const auto& s = fault_sites();
  return std::find(s.begin(), s.end(), site) != s.end();
}

std::string site_for_cause(const std::string& cause) {
  static const std::map<std::string, std::string> kSite = {
      {"nic", "nic"},
      {"link_flap", "nic"},
      {"congestion", "congestion"},
      {"link_corruption", "degraded_link"},
      {"nvlink", "nvlink"},
      {"pcie", "pcie"},
      {"hung_rank", "host_hang"},
      {"dead_rank", "dead_rank"},
      {"timeout_config", "configuration"},
      {"bootstrap", "bootstrap"},
  };
  const auto it = kSite.find(cause);
  return it == kSite.end() ? "none" : it->second;
}

std::vector<std::string> lab_node_names(int count, uint64_t draw) {
  std::mt19937_64 rng(draw);
  const int span = std::max(count * 3, 32);
  std::set<int> numbers;
  while (static_cast<int>(numbers.size()) < count) {
    numbers.insert(1 + static_cast<int>(rng() % static_cast<uint64_t>(span)));
  }
  std::vector<std::string> names;
  for (int n : numbers) names.push_back("gpu-node" + two_digits(n));
  return names;
}

std::map<std::string, std::string> node_artefacts(const std::vector<LabNode>& nodes, const FaultTruth& truth,
                                                  int64_t job_start_ns, int64_t job_end_ns) {
  std::map<std::string, std::string> files;
  const int64_t fault_ns = truth.at_ns > 0 ? truth.at_ns : job_start_ns;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const LabNode& node = nodes[i];
    if (node.ranks.empty()) continue;
    NodeState n;
    n.host = node.host;
    for (size_t local = 0; local < node.ranks.size(); ++local) {
      DeviceState d;
      d.rank = node.ranks[local];
      d.index = local;
      d.hca = "mlx5_" + std::to_string(local % 8);
      d.xmit_wait = 1200 + static_cast<uint64_t>(d.rank) * 311;  // a healthy port waits a little
      // The fault shows on the culprit rank's own GPU and HCA; its neighbours on the node stay healthy.
      if (truth.ranks.count(d.rank) > 0) apply(d, truth.site, truth.strength);
      n.devices.push_back(d);
    }
    // Each node booted at its own time, days before the job.
    const int64_t boot_ns = job_start_ns - (3LL * 86400 + static_cast<int64_t>(i) * 5417) * 1000000000LL;
    const std::string dir = "nodes/" + node.host + "/";
    files[dir + "ibstat.txt"] = ibstat(n);
    files[dir + "perfquery.txt"] = perfquery(n);
    files[dir + "dmesg.txt"] = dmesg(n, boot_ns, fault_ns);
    files[dir + "nvidia-smi-q.txt"] = nvidia_smi_q(n, job_end_ns);
    files[dir + "nvidia-smi-nvlink.txt"] = nvidia_smi_nvlink(n);
    files[dir + "lspci-vv.txt"] = lspci_vv(n);
  }
  return files;
}

}  // namespace ncclfi::cli::lab
