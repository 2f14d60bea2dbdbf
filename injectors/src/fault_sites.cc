// The site table (fault_sites.h). Sources of the "real" columns: docs/failure-signatures.md, section 7.
#include "ncclfi/fault_sites.h"

#include "ncclfi/fault_kinds.h"
#include "ncclfi/plan.h"

namespace ncclfi {
namespace {

constexpr SiteEmulation kNic[] = {
    {"verbs", "retry_exceeded",
     "NCCL's IB transport polls IBV_WC_RETRY_EXC_ERR (12) after the NCCL_IB_TIMEOUT x NCCL_IB_RETRY_CNT "
     "budget, "
     "then the QP's later work flushes: its own WARN and ncclRemoteError",
     "the bytes still moved on the real QP; only the targeted rank's completions fail"},
    {"verbs", "port_down", "ibv_query_port answers IBV_PORT_DOWN, so NCCL finds no active IB port",
     "NCCL reads the port at init only: a NIC down when the job starts; a NIC dying mid-run is "
     "retry_exceeded"},
    {"verbs", "post_error", "ibv_post_send/recv fail with the errno; NCCL's WARN and ncclSystemError",
     "a driver that refuses work; a dead NIC more often shows as retry_exceeded"},
    {"net", "error",
     "the net plugin call returns the code (ncclSystemError or ncclRemoteError), as NCCL's does",
     "no IB status, no retry delay: the error comes at once, on the shim's own path"},
    {"net", "connect_fail", "connection setup fails with the code", "at connect/accept only"},
    {"net", "nic_down",
     "the rank's port goes down (NCCL's `Got ... async event: port error` WARN on that rank at once); "
     "nothing "
     "completes, then every request fails after the IB retry budget with the IBV_WC_RETRY_EXC_ERR WARN of "
     "the "
     "NCCL release in use and its code (ncclRemoteError from 2.13.4)",
     "on the shim's TCP path; in the IB persona its peers fail the same way a budget after the link went, "
     "else they see their sockets close at once"},
    {"net", "drop", "a request never completes: the collective hangs until a watchdog acts",
     "no error ever comes; a real NIC ends with retry_exceeded"},
};

constexpr SiteEmulation kSwitch[] = {
    {"net", "delay", "completions come late", "per connection, not per switch port; no back-pressure"},
    {"net", "stall", "a connection makes no progress for a while, then resumes (a paused port)",
     "only the targeted connections pause"},
    {"net", "throttle", "a connection runs at a lower rate",
     "a token bucket per connection, not shared buffers"},
    {"verbs", "delay", "ibv_poll_cq reports completions late, on NCCL's own RDMA path",
     "the wire is not slowed: latency only, bandwidth stays"},
    {"link", "rate",
     "the host's link is rate-limited by the kernel (tc tbf), for every connection through it",
     "one host's link, not a switch port shared by many"},
};

constexpr SiteEmulation kLink[] = {
    {"verbs", "link_degrade",
     "ibv_query_port reports the lower active_speed/width; NCCL's NET/IB speed shows it",
     "read at init: a link that trained down before the job; the wire is not slowed"},
    {"net", "corrupt", "exactly N bits of a received payload flip",
     "IB's link CRCs drop corrupt packets and resend them: real bit errors cost time, not data; this is the "
     "silent corruption that gets past them"},
    {"verbs", "delay", "retransmissions seen as late completions", "a fixed hold, not a retry pattern"},
    {"verbs", "wc_error", "a completion fails with the status a bad link gives (e.g. IBV_WC_RETRY_EXC_ERR)",
     "at once: use retry_exceeded for the retry budget's delay"},
    {"net", "throttle", "the lower effective rate", "per connection"},
    {"link", "loss", "the host's link drops packets (tc netem); TCP retransmits, steps slow",
     "needs the kernel's netem qdisc (probed at run time)"},
    {"link", "corrupt", "the host's link corrupts packets (tc netem); TCP checksums drop and resend them",
     "needs netem; corruption past the checksums is net corrupt"},
};

constexpr SiteEmulation kNvlink[] = {
    {"api", "nvlink_down",
     "the job loses its NVLink/P2P path at communicator creation; NCCL falls back to shared "
     "memory",
     "NCCL_P2P_DISABLE=1 in the faulted run only: PCIe P2P goes too, and NCCL's topology still lists the "
     "links"},
    {"api", "nvlink_error",
     "a mid-run CUDA error 'uncorrectable NVLink error' reaches the job as "
     "ncclUnhandledCudaError",
     "NCCL's WARN and async error only: no Xid in the kernel log, the CUDA context stays usable"},
};

constexpr SiteEmulation kPcie[] = {
    {"api", "bandwidth_cap", "each collective takes as long as a narrower or slower link would make it",
     "the op's stream is held for its bus bytes at the cap: the bus itself is not slowed"},
    {"api", "pcie_downgrade",
     "NCCL reads a topology (NCCL_TOPO_FILE) with the lower PCIe width/speed and "
     "logs and plans for it",
     "the topology NCCL is given (its own detected one, lowered), not the link's training"},
};

constexpr FaultSite kSites[] = {
    {1, "NIC failure", "the HCA stops answering: send work requests retry until the retry budget, then fail",
     kNic},
    {2, "switch congestion", "a congested fabric port: completions slow down, throughput drops, no error",
     kSwitch},
    {3, "degraded link with bit errors",
     "a cable or port with errors: link-level retransmissions, a link that trains at a lower speed or width",
     kLink},
    {4, "NVLink failure", "an NVLink goes down: P2P over NVLink is lost (Xid, uncorrectable NVLink errors)",
     kNvlink},
    {5, "PCIe link downgrade", "a PCIe link trains at a lower width or generation: lower bandwidth, no error",
     kPcie},
};

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

const std::vector<std::string>& uses_of(const KindUses& uses, const SiteEmulation& e) {
  static const std::vector<std::string> none;
  auto it = uses.find({std::string(e.layer), std::string(e.kind)});
  return it == uses.end() ? none : it->second;
}

}  // namespace

std::span<const FaultSite> fault_sites() {
  return kSites;
}

bool fault_kind_registered(std::string_view layer, std::string_view kind) {
  for (const FaultKindSpec* spec : fault_kinds()) {
    if (to_string(spec->layer) == layer && spec->kind == kind) return true;
  }
  return false;
}

namespace {

// The two tables; the scenarios column only when `uses` is given.
std::string sites_markdown(const KindUses* uses) {
  std::string out = "| site | on real hardware |\n| ---- | ---------------- |\n";
  for (const FaultSite& site : kSites) {
    out += "| " + std::to_string(site.number) + " " + std::string(site.name) + " | " +
           std::string(site.real_failure) + " |\n";
  }
  out += uses != nullptr ? "\n| site | layer | kind | real | approximated | scenarios |\n"
                           "| ---- | ----- | ---- | ---- | ------------ | --------- |\n"
                         : "\n| site | layer | kind | real | approximated |\n"
                           "| ---- | ----- | ---- | ---- | ------------ |\n";
  for (const FaultSite& site : kSites) {
    for (const SiteEmulation& e : site.emulations) {
      const std::string kind =
          std::string(e.kind) + (fault_kind_registered(e.layer, e.kind) ? "" : " (not in this build)");
      out += "| " + std::to_string(site.number) + " " + std::string(site.name) + " | " +
             std::string(e.layer) + " | " + kind + " | " + std::string(e.real) + " | " +
             std::string(e.approximated) + " |";
      if (uses != nullptr) {
        const auto& used = uses_of(*uses, e);
        out += " " + (used.empty() ? std::string("none yet") : join(used)) + " |";
      }
      out += "\n";
    }
  }
  return out;
}

}  // namespace

std::string fault_sites_markdown(const KindUses& uses) {
  return sites_markdown(&uses);
}

std::string fault_sites_markdown() {
  return sites_markdown(nullptr);
}

nlohmann::json fault_sites_json(const KindUses& uses) {
  nlohmann::json sites = nlohmann::json::array();
  for (const FaultSite& site : kSites) {
    nlohmann::json kinds = nlohmann::json::array();
    for (const SiteEmulation& e : site.emulations) {
      kinds.push_back({{"layer", e.layer},
                       {"kind", e.kind},
                       {"registered", fault_kind_registered(e.layer, e.kind)},
                       {"real", e.real},
                       {"approximated", e.approximated},
                       {"scenarios", uses_of(uses, e)}});
    }
    sites.push_back(
        {{"site", site.number}, {"name", site.name}, {"real_failure", site.real_failure}, {"kinds", kinds}});
  }
  return sites;
}

}  // namespace ncclfi
