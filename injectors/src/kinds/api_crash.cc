// api crash: the process dies at the call, by the signal or with the exit code.
#include "kind_support.h"

namespace ncclfi::kinds {
namespace {

constexpr ParamSpec kParams[] = {{.name = "signal",
                                  .type = ParamType::kSignal,
                                  .default_json = R"("SIGABRT")",
                                  .meaning = "the signal the process dies by"},
                                 {.name = "exit_code",
                                  .type = ParamType::kExitCode,
                                  .absent = "die by `signal`",
                                  .meaning = "exit with this code instead of a signal"}};

FaultAction resolve(const ParamReader& p) {
  // Both at once would leave one silently unused.
  if (p.has("exit_code") && p.has("signal")) p.fail("exit_code", "signal or exit_code, not both");
  if (auto code = p.optional_integer("exit_code")) return ApiAction{ExitWithCode{static_cast<int>(*code)}};
  return ApiAction{DieBySignal{p.signal("signal")}};
}

}  // namespace

extern const FaultKindSpec kApiCrash;
constinit const FaultKindSpec kApiCrash{Layer::kApi,
                                        "crash",
                                        "the process dies at the call, by the signal or with the exit code",
                                        kApiOpsAndGroupEnd,
                                        kParams,
                                        resolve,
                                        {.process = ProcessEffect::kEnds}};

}  // namespace ncclfi::kinds
