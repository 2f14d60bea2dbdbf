// The site table (`ncclfi list sites`): five sites, each emulated by something; a kind named for a layer of
// this build is a registered kind (a renamed or removed kind fails here); kinds of layers this build lacks
// are listed as planned; the scenarios found for a kind appear in its row.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "ncclfi/fault_kinds.h"
#include "ncclfi/fault_sites.h"
#include "ncclfi/plan.h"

namespace ncclfi {
namespace {

TEST(FaultSites, FiveSitesNumberedOneToFiveEachWithAnEmulation) {
  ASSERT_EQ(fault_sites().size(), 5U);
  int n = 0;
  for (const FaultSite& site : fault_sites()) {
    EXPECT_EQ(site.number, ++n);
    EXPECT_FALSE(site.emulations.empty()) << site.name;
    for (const SiteEmulation& e : site.emulations) {
      EXPECT_FALSE(e.real.empty()) << e.kind;
      EXPECT_FALSE(e.approximated.empty()) << e.kind;
    }
  }
}

TEST(FaultSites, EveryKindNotMarkedPlannedIsRegistered) {
  for (const FaultSite& site : fault_sites()) {
    for (const SiteEmulation& e : site.emulations) {
      if (e.planned) continue;  // another part of the project adds it
      EXPECT_TRUE(fault_kind_registered(e.layer, e.kind)) << site.name << ": " << e.layer << " " << e.kind;
    }
  }
}

TEST(FaultSites, TheVerbsKindsCoverTheNicAndTheLink) {
  std::set<std::string> nic;
  std::set<std::string> link;
  for (const SiteEmulation& e : fault_sites()[0].emulations)
    nic.insert(std::string(e.layer) + "/" + std::string(e.kind));
  for (const SiteEmulation& e : fault_sites()[2].emulations)
    link.insert(std::string(e.layer) + "/" + std::string(e.kind));
  EXPECT_TRUE(nic.contains("verbs/retry_exceeded"));
  EXPECT_TRUE(nic.contains("verbs/port_down"));
  EXPECT_TRUE(link.contains("verbs/link_degrade"));
}

TEST(FaultSites, MarkdownListsUsesAndUnregisteredKinds) {
  KindUses uses;
  uses[{"verbs", "retry_exceeded"}] = {"a-scenario", "b-scenario"};
  const std::string md = fault_sites_markdown(uses);
  EXPECT_NE(md.find("| 1 NIC failure | verbs | retry_exceeded |"), std::string::npos) << md;
  EXPECT_NE(md.find("| a-scenario, b-scenario |"), std::string::npos);
  EXPECT_NE(md.find("none yet"), std::string::npos);
  // Every site's kinds are registered in this build: nothing is marked missing, the NVLink/PCIe ones
  // included.
  EXPECT_EQ(md.find("(not in this build)"), std::string::npos) << md;
  EXPECT_NE(md.find("| 4 NVLink failure | api | nvlink_down |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 5 PCIe link downgrade | api | pcie_downgrade |"), std::string::npos) << md;
  const auto js = fault_sites_json(uses);
  ASSERT_EQ(js.size(), 5U);
  EXPECT_EQ(js[0]["kinds"][0]["scenarios"], nlohmann::json::array({"a-scenario", "b-scenario"}));
  EXPECT_EQ(js[0]["kinds"][0]["registered"], true);
}

}  // namespace
TEST(FaultSites, DocsContainTheSitesTablesVerbatim) {
  std::ifstream in(NCCLFI_SOURCE_DIR "/docs/faults.md");
  ASSERT_TRUE(in) << "docs/faults.md not found";
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find(fault_sites_markdown()), std::string::npos)
      << "docs/faults.md is out of date: run scripts/update-doc-tables:\n"
      << fault_sites_markdown();
}

}  // namespace ncclfi
