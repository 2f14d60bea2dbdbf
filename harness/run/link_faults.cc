#include "link_faults.h"

#include <cstdio>

namespace ncclfi::cli {
namespace {

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

std::vector<std::string> link_qdisc(const LinkAction& action) {
  return std::visit(
      Overloaded{
          [](const LimitRate& r) -> std::vector<std::string> {
            // kbit: tc reads "mbit" as megabits too, but a fraction of a Mbit/s reads clearer in kbit.
            return {"tbf",     "rate", number(r.mbit * 1000) + "kbit", "burst", number(r.burst_kb) + "kb",
                    "latency", "400ms"};
          },
          [](const Netem& n) -> std::vector<std::string> {
            switch (n.what) {
              case Netem::What::kDelay:
                return {"netem", "delay", number(n.value) + "ms", number(n.jitter) + "ms"};
              case Netem::What::kLoss:
                return {"netem", "loss", number(n.value) + "%"};
              case Netem::What::kCorrupt:
                return {"netem", "corrupt", number(n.value) + "%"};
            }
            return {};
          },
      },
      action);
}

std::string link_capability(const LinkAction& action) {
  return std::visit(Overloaded{
                        [](const LimitRate&) -> std::string { return "rate"; },
                        [](const Netem& n) -> std::string {
                          return n.what == Netem::What::kDelay  ? "delay"
                                 : n.what == Netem::What::kLoss ? "loss"
                                                                : "corrupt";
                        },
                    },
                    action);
}

std::optional<std::string> link_faults_unavailable(const Scenario& scenario, const AgentHub& hub) {
  for (const Fault& f : scenario.plan.faults) {
    const LinkAction* action = f.link_action();
    if (action == nullptr) continue;
    const std::string needed = link_capability(*action);
    for (const auto& [host, can] : hub.link_capabilities()) {
      if (can.count(needed)) continue;
      std::string list;
      for (const auto& c : can) list += (list.empty() ? "" : ", ") + c;
      return "link fault '" + f.id + "' (" + needed + ") cannot run on " + host + ": its kernel can do " +
             (list.empty() ? "no link fault (no tc, or not root)" : list) +
             (needed == "rate" ? "" : " (delay, loss and corrupt need the netem qdisc, sch_netem)");
    }
  }
  return std::nullopt;
}

LinkFaultSchedule::LinkFaultSchedule(const Scenario& scenario) {
  for (const Fault& f : scenario.plan.faults) {
    if (f.link_action() == nullptr || !f.trigger.armed) continue;
    for (int rank : f.target.resolve_ranks(scenario.workload.ranks))
      actions_.push_back({f, rank, std::nullopt});
  }
  // One interface named exactly ("eth0", "=eth0") is the one the job uses; a prefix or a list is not.
  if (const auto it = scenario.env.find("NCCL_SOCKET_IFNAME"); it != scenario.env.end()) {
    std::string name = it->second;
    if (!name.empty() && name[0] == '=') name.erase(0, 1);
    if (!name.empty() && name[0] != '^' && name.find(',') == std::string::npos) device_ = name;
  }
}

}  // namespace ncclfi::cli
