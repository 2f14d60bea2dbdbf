// The operator's files per node of a lab (harness/apps/labs/lab_artefacts.cc): for each fault site the
// culprit's files carry the signature and the healthy nodes' do not, and each file parses as its tool's
// output does.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "lab_artefacts.h"

namespace ncclfi::cli::lab {
namespace {

constexpr int64_t kStart = 1764772321000000000LL;  // 2025-12-03
constexpr int64_t kEnd = kStart + 30000000000LL;

std::vector<LabNode> four_nodes() {
  return {{"gpu-node03", {0}}, {"gpu-node04", {1}}, {"gpu-node09", {2}}, {"gpu-node11", {3}}};
}

std::map<std::string, std::string> files_for(const std::string& site, int culprit = 2,
                                             double strength = 1.0) {
  FaultTruth truth;
  truth.site = site;
  truth.ranks = {culprit};
  truth.strength = strength;
  truth.at_ns = kStart + 12000000000LL;
  return node_artefacts(four_nodes(), truth, kStart, kEnd);
}

const std::string& file(const std::map<std::string, std::string>& files, const std::string& host,
                        const std::string& name) {
  return files.at("nodes/" + host + "/" + name);
}

// A perfquery counter's value ("Name:....value").
uint64_t counter(const std::string& perfquery, const std::string& name) {
  const std::regex re("(^|\\n)" + name + ":\\.+([0-9]+)\\n");
  std::smatch m;
  if (!std::regex_search(perfquery, m, re)) throw std::runtime_error("no counter " + name);
  return std::stoull(m[2].str());
}

// ibstat's port field ("\t\tState: Active").
std::string ibstat_field(const std::string& ibstat, const std::string& name) {
  const std::regex re("\\n\\t\\t" + name + ": ([^\\n]+)\\n");
  std::smatch m;
  if (!std::regex_search(ibstat, m, re)) throw std::runtime_error("no field " + name);
  return m[1].str();
}

const char* const kHealthy[] = {"gpu-node03", "gpu-node04", "gpu-node11"};

bool has_downgrade(const std::string& lspci) {
  return lspci.find("(downgraded)") != std::string::npos;
}
bool has_xid(const std::string& dmesg, int xid) {
  return std::regex_search(dmesg,
                           std::regex("NVRM: Xid \\(PCI:[0-9a-f:]+\\): " + std::to_string(xid) + ", "));
}

void expect_all_healthy(const std::map<std::string, std::string>& files, const std::string& host) {
  SCOPED_TRACE(host);
  EXPECT_EQ(ibstat_field(file(files, host, "ibstat.txt"), "State"), "Active");
  EXPECT_EQ(ibstat_field(file(files, host, "ibstat.txt"), "Physical state"), "LinkUp");
  const std::string& pq = file(files, host, "perfquery.txt");
  EXPECT_EQ(counter(pq, "SymbolErrorCounter"), 0u);
  EXPECT_EQ(counter(pq, "LinkDownedCounter"), 0u);
  EXPECT_EQ(counter(pq, "PortRcvErrors"), 0u);
  EXPECT_LT(counter(pq, "PortXmitWait"), 100000u);
  EXPECT_FALSE(has_downgrade(file(files, host, "lspci-vv.txt")));
  EXPECT_EQ(file(files, host, "nvidia-smi-nvlink.txt").find("<inactive>"), std::string::npos);
  const std::string& dmesg = file(files, host, "dmesg.txt");
  EXPECT_FALSE(has_xid(dmesg, 74));
  EXPECT_FALSE(has_xid(dmesg, 79));
  EXPECT_EQ(dmesg.find("Cable error"), std::string::npos);
  EXPECT_EQ(dmesg.find("AER"), std::string::npos);
}

TEST(LabArtefacts, EveryNodeGetsEveryToolsFile) {
  const auto files = files_for("none");
  for (const auto& node : four_nodes()) {
    for (const char* name : {"ibstat.txt", "perfquery.txt", "dmesg.txt", "nvidia-smi-q.txt",
                             "nvidia-smi-nvlink.txt", "lspci-vv.txt"}) {
      EXPECT_TRUE(files.count("nodes/" + node.host + "/" + name)) << node.host << " " << name;
    }
    expect_all_healthy(files, node.host);
  }
}

TEST(LabArtefacts, ANicFaultTakesItsPortDownAndLogsTheCable) {
  const auto files = files_for("nic");
  EXPECT_EQ(ibstat_field(file(files, "gpu-node09", "ibstat.txt"), "State"), "Down");
  EXPECT_EQ(ibstat_field(file(files, "gpu-node09", "ibstat.txt"), "Physical state"), "Polling");
  EXPECT_EQ(counter(file(files, "gpu-node09", "perfquery.txt"), "LinkDownedCounter"), 1u);
  const std::string& dmesg = file(files, "gpu-node09", "dmesg.txt");
  EXPECT_NE(dmesg.find("mlx5_core 0000:1b:00.0: Port module event[error]: module 0, Cable error"),
            std::string::npos);
  // ...at the moment of the fault, in dmesg -T's clock.
  const time_t t = static_cast<time_t>((kStart + 12000000000LL) / 1000000000);
  std::tm local{};
  localtime_r(&t, &local);
  char stamp[64];
  std::strftime(stamp, sizeof stamp, "[%a %b %e %H:%M:%S %Y] mlx5_core", &local);
  EXPECT_NE(dmesg.find(std::string(stamp) + " 0000:1b:00.0: Port module event[error]"), std::string::npos)
      << dmesg;
  // The HCA is the one the rank's NCCL lines name (mlx5_<local rank>): the node's only rank has mlx5_0.
  EXPECT_EQ(file(files, "gpu-node09", "ibstat.txt").rfind("CA 'mlx5_0'", 0), 0u);
  for (const char* host : kHealthy) expect_all_healthy(files, host);
}

TEST(LabArtefacts, CongestionWaitsToSendWithoutErrors) {
  const auto files = files_for("congestion");
  const std::string& pq = file(files, "gpu-node09", "perfquery.txt");
  EXPECT_GT(counter(pq, "PortXmitWait"), 1000000u);
  EXPECT_EQ(counter(pq, "SymbolErrorCounter"), 0u);
  EXPECT_EQ(counter(pq, "PortRcvErrors"), 0u);
  EXPECT_EQ(ibstat_field(file(files, "gpu-node09", "ibstat.txt"), "State"), "Active");
  for (const char* host : kHealthy) expect_all_healthy(files, host);
}

TEST(LabArtefacts, ADegradedLinkCountsSymbolAndReceiveErrorsByStrength) {
  const auto strong = files_for("degraded_link", 2, 1.0);
  const auto weak = files_for("degraded_link", 2, 0.1);
  const std::string& pq = file(strong, "gpu-node09", "perfquery.txt");
  EXPECT_GT(counter(pq, "SymbolErrorCounter"), 0u);
  EXPECT_GT(counter(pq, "PortRcvErrors"), 0u);
  EXPECT_GT(counter(pq, "SymbolErrorCounter"),
            counter(file(weak, "gpu-node09", "perfquery.txt"), "SymbolErrorCounter"));
  EXPECT_EQ(ibstat_field(file(strong, "gpu-node09", "ibstat.txt"), "State"), "Active");
  for (const char* host : kHealthy) expect_all_healthy(strong, host);
}

TEST(LabArtefacts, APcieDowngradeShowsInLspciNvidiaSmiAndTheKernelLog) {
  const auto files = files_for("pcie");
  const std::string& lspci = file(files, "gpu-node09", "lspci-vv.txt");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      lspci, m, std::regex("\\t\\tLnkCap:\\tPort #0, Speed ([0-9.]+GT/s), Width x([0-9]+),")));
  EXPECT_EQ(m[1].str(), "32GT/s");
  EXPECT_EQ(m[2].str(), "16");
  ASSERT_TRUE(std::regex_search(
      lspci, m,
      std::regex(
          "\\t\\tLnkSta:\\tSpeed ([0-9.]+GT/s) \\(downgraded\\), Width x([0-9]+) \\(downgraded\\)\\n")));
  EXPECT_EQ(m[1].str(), "8GT/s");
  EXPECT_EQ(m[2].str(), "4");
  // nvidia-smi -q: Current below Max, in the "GPU Link Info" block.
  const std::string& q = file(files, "gpu-node09", "nvidia-smi-q.txt");
  EXPECT_NE(q.find("            PCIe Generation\n                Max                       : 5\n"
                   "                Current                   : 3\n"),
            std::string::npos)
      << q;
  EXPECT_NE(q.find("                Current                   : 4x\n"), std::string::npos);
  const std::string& dmesg = file(files, "gpu-node09", "dmesg.txt");
  EXPECT_NE(dmesg.find("limited by 8.0 GT/s PCIe x4 link at 0000:17:01.0 (capable of 504.112 Gb/s with "
                       "32.0 GT/s PCIe x16 link)"),
            std::string::npos)
      << dmesg;
  EXPECT_NE(dmesg.find("PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)"),
            std::string::npos);
  for (const char* host : kHealthy) {
    expect_all_healthy(files, host);
    EXPECT_NE(file(files, host, "nvidia-smi-q.txt").find("                Current                   : 16x\n"),
              std::string::npos);
  }
}

TEST(LabArtefacts, AnNvlinkFaultHasAnInactiveLinkAndXid74) {
  const auto files = files_for("nvlink");
  const std::string& nv = file(files, "gpu-node09", "nvidia-smi-nvlink.txt");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(nv, m, std::regex("\\n\\t Link ([0-9]+): <inactive>\\n")));
  const std::string link = m[1].str();
  EXPECT_TRUE(std::regex_search(nv, std::regex("\\n\\t Link " + link + ": CRC Errors: [1-9]")));
  EXPECT_TRUE(std::regex_search(file(files, "gpu-node09", "dmesg.txt"),
                                std::regex("NVRM: Xid \\(PCI:0000:[0-9a-f]{2}:00\\): 74, pid='<unknown>', "
                                           "name=<unknown>, NVLink: fatal error detected on link " +
                                           link + "\\(")));
  for (const char* host : kHealthy) expect_all_healthy(files, host);
}

TEST(LabArtefacts, AGpuThatFellOffTheBusLogsXid79) {
  const auto files = files_for("gpu_hang");
  EXPECT_TRUE(has_xid(file(files, "gpu-node09", "dmesg.txt"), 79));
  EXPECT_NE(file(files, "gpu-node09", "dmesg.txt").find("GPU has fallen off the bus."), std::string::npos);
  for (const char* host : kHealthy) expect_all_healthy(files, host);
}

TEST(LabArtefacts, FaultsOutsideTheHardwareLeaveEveryNodeHealthy) {
  for (const char* site : {"host_hang", "dead_rank", "bootstrap", "configuration", "none"}) {
    SCOPED_TRACE(site);
    const auto files = files_for(site);
    for (const auto& node : four_nodes()) expect_all_healthy(files, node.host);
  }
}

// Two ranks per node: each rank has its own GPU and HCA (local rank i: GPU i, mlx5_i), and the fault
// shows on the culprit's devices only, never on its neighbour's on the same node.
std::map<std::string, std::string> two_per_node_files(const std::string& site, int culprit) {
  FaultTruth truth;
  truth.site = site;
  truth.ranks = {culprit};
  truth.at_ns = kStart + 12000000000LL;
  return node_artefacts({{"gpu-node05", {0, 1}}, {"gpu-node12", {2, 3}}}, truth, kStart, kEnd);
}

// The text from `from` up to the next `to` (or the end).
std::string section(const std::string& text, const std::string& from, const std::string& to) {
  const size_t start = text.find(from);
  if (start == std::string::npos) throw std::runtime_error("no " + from);
  const size_t end = text.find(to, start + from.size());
  return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

TEST(LabArtefacts, ANodeOfTwoRanksHasTwoGpusAndTwoHcasAndOnlyTheCulpritsShowTheFault) {
  const auto nic = two_per_node_files("nic", 3);
  const std::string& ib = file(nic, "gpu-node12", "ibstat.txt");
  EXPECT_EQ(ibstat_field(section(ib, "CA 'mlx5_0'", "CA '"), "State"), "Active");
  EXPECT_EQ(ibstat_field(section(ib, "CA 'mlx5_1'", "CA '"), "State"), "Down");
  const std::string& pq = file(nic, "gpu-node12", "perfquery.txt");
  EXPECT_EQ(counter(section(pq, "$ perfquery -C mlx5_0 -P 1\n", "$ perfquery"), "LinkDownedCounter"), 0u);
  EXPECT_EQ(counter(section(pq, "$ perfquery -C mlx5_1 -P 1\n", "$ perfquery"), "LinkDownedCounter"), 1u);
  // The cable error is the second HCA's (its own PCI address and module).
  EXPECT_NE(
      file(nic, "gpu-node12", "dmesg.txt").find("mlx5_core 0000:2b:00.0: Port module event[error]: module 0"),
      std::string::npos);
  EXPECT_EQ(file(nic, "gpu-node12", "dmesg.txt").find("0000:1b:00.0: Port module event[error]"),
            std::string::npos);
  expect_all_healthy(nic, "gpu-node05");

  const auto nvlink = two_per_node_files("nvlink", 2);
  const std::string& nv = file(nvlink, "gpu-node12", "nvidia-smi-nvlink.txt");
  const std::string status = section(nv, "$ nvidia-smi nvlink -s", "$ nvidia-smi nvlink -e");
  EXPECT_NE(section(status, "GPU 0: ", "GPU 1: ").find("<inactive>"), std::string::npos);
  EXPECT_EQ(section(status, "GPU 1: ", "\n\n").find("<inactive>"), std::string::npos);
  EXPECT_TRUE(has_xid(file(nvlink, "gpu-node12", "dmesg.txt"), 74));
  EXPECT_NE(file(nvlink, "gpu-node12", "dmesg.txt").find("NVRM: Xid (PCI:0000:18:00): 74"),
            std::string::npos);

  const auto pcie = two_per_node_files("pcie", 1);
  const std::string& lspci = file(pcie, "gpu-node05", "lspci-vv.txt");
  EXPECT_FALSE(has_downgrade(section(lspci, "18:00.0 3D controller", "2a:00.0 3D controller")));
  EXPECT_TRUE(has_downgrade(section(lspci, "2a:00.0 3D controller", "\n\n")));
  const std::string& q = file(pcie, "gpu-node05", "nvidia-smi-q.txt");
  EXPECT_NE(q.find("Attached GPUs                             : 2\n"), std::string::npos) << q;
  EXPECT_NE(
      section(q, "GPU 00000000:2A:00.0", "GPU 0000").find("                Current                   : 4x\n"),
      std::string::npos);
  EXPECT_NE(section(q, "GPU 00000000:18:00.0", "GPU 00000000:2A")
                .find("                Current                   : 16x\n"),
            std::string::npos);
  expect_all_healthy(pcie, "gpu-node12");
}

TEST(LabArtefacts, PerfqueryPadsEachCounterWithDotsToColumn33) {
  const auto files = files_for("none");
  const std::string& pq = file(files, "gpu-node03", "perfquery.txt");
  EXPECT_EQ(pq.rfind("$ perfquery -C mlx5_0 -P 1\n# Port counters: Lid 100 port 1 (CapMask: 0x1600)\n"
                     "PortSelect:......................1\n",
                     0),
            0u);
  std::istringstream lines(pq);
  std::string line;
  std::getline(lines, line);  // the command
  std::getline(lines, line);  // the header
  while (std::getline(lines, line)) {
    const size_t dots_end = line.find_last_of('.') + 1;
    EXPECT_EQ(dots_end, 33u) << line;
  }
}

TEST(LabArtefacts, CausesMapToSites) {
  EXPECT_EQ(site_for_cause("nic"), "nic");
  EXPECT_EQ(site_for_cause("link_corruption"), "degraded_link");
  EXPECT_EQ(site_for_cause("hung_rank"), "host_hang");
  EXPECT_EQ(site_for_cause("timeout_config"), "configuration");
  EXPECT_EQ(site_for_cause("remote_error"), "none");
  for (const auto& s : fault_sites()) EXPECT_TRUE(is_fault_site(s));
  EXPECT_FALSE(is_fault_site("cable"));
}

TEST(LabArtefacts, NodeNamesAreDistinctAscendingAndDrawn) {
  const auto a = lab_node_names(4, 1), b = lab_node_names(4, 2);
  ASSERT_EQ(a.size(), 4u);
  EXPECT_TRUE(std::is_sorted(a.begin(), a.end()));
  EXPECT_EQ(std::set<std::string>(a.begin(), a.end()).size(), 4u);
  for (const auto& n : a) EXPECT_TRUE(std::regex_match(n, std::regex("gpu-node[0-9]{2}"))) << n;
  EXPECT_NE(a, b);
  EXPECT_EQ(a, lab_node_names(4, 1));
}

}  // namespace
}  // namespace ncclfi::cli::lab
