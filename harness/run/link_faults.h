// link-layer faults: a host's link slowed, delayed, lossy or corrupting, with the kernel's traffic
// control, by the node agent of each targeted rank's host (agent_node.h). Timed like proc faults:
// `after_ms` from when the rank's agent first reports it running. A host carries one qdisc: the fault
// stays until the attempt ends, when every agent removes what it installed.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent_hub.h"
#include "ncclfi/plan.h"
#include "scenario.h"

namespace ncclfi::cli {

// The qdisc that carries out `action` (tc's words after `root`): "tbf rate 8mbit burst 32kb latency
// 400ms", "netem delay 20ms 5ms", "netem loss 5%", "netem corrupt 1%".
std::vector<std::string> link_qdisc(const LinkAction& action);
// The link faults an action needs of the kernel: "rate" (tbf) or "delay", "loss", "corrupt" (netem).
std::string link_capability(const LinkAction& action);

// Why the agents cannot carry out the scenario's link faults ("link fault 'slow' needs ... node2 ..."),
// or nullopt when every agent's kernel can.
std::optional<std::string> link_faults_unavailable(const Scenario& scenario, const AgentHub& hub);

class LinkFaultSchedule {
 public:
  LinkFaultSchedule() = default;
  explicit LinkFaultSchedule(const Scenario& scenario);
  // Applies the faults now due, through `hub`; `record` writes the inject event of each (rank: the first
  // targeted rank on that host).
  template <typename Record>
  void fire_due(int64_t now_ns, AgentHub& hub, Record&& record) {
    for (auto& a : actions_) {
      if (a.done) continue;
      const auto hosts = hub.rank_hosts();
      const auto it = hosts.find(a.rank);
      if (it == hosts.end()) continue;
      if (!a.due_ns) a.due_ns = now_ns + static_cast<int64_t>(a.fault.trigger.after_ms) * 1'000'000;
      if (*a.due_ns > now_ns) continue;
      a.done = true;
      if (!applied_.insert({a.fault.id, it->second}).second) continue;  // one qdisc per host and fault
      const EventTime at = EventTime::now();
      if (hub.link(it->second, link_qdisc(*a.fault.link_action()), device_) > 0) record(a.fault, a.rank, at);
    }
  }

 private:
  struct Action {
    Fault fault;
    int rank;
    std::optional<int64_t> due_ns;
    bool done = false;
  };
  std::vector<Action> actions_;
  std::set<std::pair<std::string, std::string>> applied_;  // (fault id, host)
  std::string
      device_;  // the scenario's NCCL_SOCKET_IFNAME when it names one interface, else the agent's choice
};

}  // namespace ncclfi::cli
