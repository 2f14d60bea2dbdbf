// verbs wc_error: a completion comes back with an IB error status, and the QP's later ones flush.
#include <array>

#include "kind_support.h"
#include "ncclfi/ib_verbs_codes.h"

namespace ncclfi::kinds {
namespace {

// Every status but IBV_WC_SUCCESS.
constexpr auto kStatusNames = [] {
  std::array<std::string_view, ib::kWcStatuses.size() - 1> names{};
  for (size_t i = 1; i < ib::kWcStatuses.size(); ++i) names[i - 1] = ib::kWcStatuses[i].name;
  return names;
}();

constexpr ParamSpec kParams[] = {{.name = "status",
                                  .type = ParamType::kChoice,
                                  .default_json = R"("IBV_WC_REM_ACCESS_ERR")",
                                  .meaning = "the ibv_wc_status of the completion",
                                  .choices = kStatusNames},
                                 {.name = "vendor_err",
                                  .type = ParamType::kNonNegInt,
                                  .default_json = R"(0)",
                                  .meaning = "the wc's vendor_err (the HCA's own syndrome; NCCL prints it)"}};

FaultAction resolve(const ParamReader& p) {
  const int status = ib::code_of(ib::kWcStatuses, p.choice("status")).value_or(ib::kWcRemAccessErr);
  return VerbsAction{CompletionError{status, static_cast<uint32_t>(p.integer("vendor_err")), false}};
}

}  // namespace

extern const FaultKindSpec kVerbsWcError;
constinit const FaultKindSpec kVerbsWcError{
    Layer::kVerbs,
    "wc_error",
    "the completion comes back with the status at once; the QP's later completions flush",
    kVerbsCompletions,
    kParams,
    resolve};

}  // namespace ncclfi::kinds
