// proc kill: the harness sends the signal to the rank's processes.
#include "kind_support.h"

namespace ncclfi::kinds {
namespace {

constexpr std::string_view kProcKillPoints[] = {points::kProcKill};

constexpr ParamSpec kParams[] = {{.name = "signal",
                                  .type = ParamType::kSignal,
                                  .default_json = R"("SIGKILL")",
                                  .meaning = "the signal sent"}};

FaultAction resolve(const ParamReader& p) {
  return ProcAction{KillProcess{p.signal("signal")}};
}

}  // namespace

extern const FaultKindSpec kProcKill;
constinit const FaultKindSpec kProcKill{Layer::kProc,
                                        "kill",
                                        "the harness sends the signal to the rank's processes",
                                        kProcKillPoints,
                                        kParams,
                                        resolve,
                                        {.process = ProcessEffect::kEnds}};

}  // namespace ncclfi::kinds
