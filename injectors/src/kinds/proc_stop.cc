// proc stop: the harness SIGSTOPs the rank and SIGCONTs it after ms.
#include "kind_support.h"

namespace ncclfi::kinds {
namespace {

constexpr std::string_view kProcStopPoints[] = {points::kProcStop};

constexpr ParamSpec kParams[] = {{.name = "ms",
                                  .type = ParamType::kNonNegNumber,
                                  .absent = "stopped until the attempt ends (so does 0)",
                                  .meaning = "how long the rank stays stopped"}};

FaultAction resolve(const ParamReader& p) {
  std::optional<double> ms = p.optional_number("ms");
  if (ms && *ms == 0) ms.reset();
  return ProcAction{StopProcess{ms}};
}

}  // namespace

extern const FaultKindSpec kProcStop;
constinit const FaultKindSpec kProcStop{
    Layer::kProc, "stop",  "the harness SIGSTOPs the rank and SIGCONTs it after ms",  kProcStopPoints,
    kParams,      resolve, {.process = ProcessEffect::kStops, .duration_param = "ms"}};

}  // namespace ncclfi::kinds
