// requires.nccl_version and requires.ib_ports, and the IB port failover scenarios (scenarios/ib/) that need
// them: both validate everywhere, and a host without NCCL 2.29.7 or without two Active IB ports skips them
// with the reason instead of running them. This host (the CPU CI) has neither: the toolkit's NCCL is older
// and there is no /sys/class/infiniband.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "ib_ports.h"
#include "nccl_symbols.h"
#include "scenario.h"

namespace ncclfi::cli {
namespace {

namespace fs = std::filesystem;

const std::string kIb = std::string(NCCLFI_SOURCE_DIR) + "/scenarios/ib/";

TEST(NcclVersion, CodesAsNcclGetVersionReportsThem) {
  EXPECT_EQ(nccl_version_code("2.29.7"), 22907);
  EXPECT_EQ(nccl_version_code("2.30"), 23000);
  EXPECT_EQ(nccl_version_code("2.9.9"), 20909);
  EXPECT_EQ(nccl_version_code("2.29.7x"), -1);
  EXPECT_EQ(nccl_version_code("two"), -1);
  EXPECT_EQ(nccl_version_code("2"), -1);
  EXPECT_EQ(nccl_older_than("", ""), "") << "no requirement";
}

// The host's libnccl.so.2 against a requirement below and above it: the check can say yes and no.
TEST(NcclVersion, ALowerRequirementIsMetAndAHigherOneNamesTheLibraryAndItsVersion) {
  if (!missing_nccl_symbols({"ncclGetVersion"}, "").empty()) GTEST_SKIP() << "no libnccl.so.2 on this host";
  EXPECT_EQ(nccl_older_than("2.0", ""), "");
  const std::string why = nccl_older_than("99.0", "");
  EXPECT_EQ(why.rfind("needs NCCL >= 99.0: ", 0), 0U) << why;
  EXPECT_NE(why.find("libnccl.so.2 is NCCL 2."), std::string::npos) << why;
  EXPECT_EQ(nccl_older_than("2.0", "/nonexistent"), "") << "a directory without it: the loader's own";
}

// A sysfs tree as the kernel writes it (drivers/infiniband/core/sysfs.c: "<n>: <STATE>").
void write_port(const fs::path& root, const std::string& hca, int port, const std::string& state) {
  const fs::path dir = root / hca / "ports" / std::to_string(port);
  fs::create_directories(dir);
  std::ofstream(dir / "state") << state << "\n";
}

TEST(IbPorts, CountsTheActivePortsOfEveryHca) {
  const fs::path root = fs::path(testing::TempDir()) / "ncclfi-ib-ports";
  fs::remove_all(root);
  EXPECT_EQ(active_ib_ports(root.string()), 0) << "no such directory: none";
  write_port(root, "mlx5_0", 1, "4: ACTIVE");
  EXPECT_EQ(active_ib_ports(root.string()), 1);
  EXPECT_EQ(too_few_ib_ports(2, root.string()),
            "needs 2 active InfiniBand/RoCE ports: " + root.string() + " lists 1");
  write_port(root, "mlx5_1", 1, "1: DOWN");
  EXPECT_EQ(active_ib_ports(root.string()), 1) << "a port that is down does not count";
  write_port(root, "mlx5_1", 2, "4: ACTIVE");
  EXPECT_EQ(active_ib_ports(root.string()), 2);
  EXPECT_EQ(too_few_ib_ports(2, root.string()), "");
  EXPECT_EQ(too_few_ib_ports(0, root.string()), "");
  fs::remove_all(root);
}

TEST(IbPortFailoverScenarios, ValidateAndAskForNccl2297TwoPortsAndTheVerbsLayer) {
  for (const char* name : {"ib-port-failover-recovered.json", "ib-port-failover-off-fails.json"}) {
    SCOPED_TRACE(name);
    const Scenario s = load_scenario(kIb + name);
    EXPECT_EQ(s.required_nccl_version, "2.29.7");
    EXPECT_EQ(s.required_ib_ports, 2);
    ASSERT_EQ(s.plan.faults.size(), 1U);
    EXPECT_EQ(s.plan.faults[0].layer, Layer::kVerbs);
    EXPECT_EQ(s.plan.faults[0].target.device, "mlx5_0");
    EXPECT_EQ(s.plan.faults[0].target.port, 1);
    const Scenario other = load_scenario(kIb + name, {{"failed_hca", "mlx5_3"}, {"failed_port", "2"}});
    EXPECT_EQ(other.plan.faults[0].target.device, "mlx5_3");
    EXPECT_EQ(other.plan.faults[0].target.port, 2);
  }
  EXPECT_EQ(load_scenario(kIb + "ib-port-failover-recovered.json").env.at("NCCL_IB_RESILIENCY_PORT_FAILOVER"),
            "1");
  EXPECT_EQ(load_scenario(kIb + "ib-port-failover-off-fails.json").env.at("NCCL_IB_RESILIENCY_PORT_FAILOVER"),
            "0");
}

// On this host: skipped for the NCCL version first; with the version met, for the IB ports; with both
// met, nothing left (the skip logic can say yes).
TEST(IbPortFailoverScenarios, SkippedHereWithTheReasons) {
  if (!missing_nccl_symbols({"ncclGetVersion"}, "").empty()) GTEST_SKIP() << "no libnccl.so.2 on this host";
  if (nccl_older_than("2.29.7", "").empty()) GTEST_SKIP() << "this host's NCCL is 2.29.7 or newer";
  if (active_ib_ports() >= 2) GTEST_SKIP() << "this host has two Active IB ports";
  for (const char* name : {"ib-port-failover-recovered.json", "ib-port-failover-off-fails.json"}) {
    SCOPED_TRACE(name);
    Scenario s = load_scenario(kIb + name);
    s.env.erase("LD_LIBRARY_PATH");
    const std::string version_why = unmet_requirement(s);
    EXPECT_EQ(version_why.rfind("needs NCCL >= 2.29.7: ", 0), 0U) << version_why;
    EXPECT_NE(version_why.find(" is NCCL 2."), std::string::npos) << version_why;
    s.required_nccl_version = "2.0";
    EXPECT_EQ(unmet_requirement(s), "needs 2 active InfiniBand/RoCE ports: /sys/class/infiniband lists " +
                                        std::to_string(active_ib_ports()));
    s.required_ib_ports = 0;
    EXPECT_EQ(unmet_requirement(s), "");
  }
}

}  // namespace
}  // namespace ncclfi::cli
