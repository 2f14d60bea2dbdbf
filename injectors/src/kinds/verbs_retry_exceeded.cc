// verbs retry_exceeded: a completion comes back IBV_WC_RETRY_EXC_ERR once the IB retry budget has passed.
#include "kind_support.h"
#include "ncclfi/ib_verbs_codes.h"

namespace ncclfi::kinds {
namespace {

constexpr ParamSpec kParams[] = {{.name = "vendor_err",
                                  .type = ParamType::kNonNegInt,
                                  .default_json = R"(0)",
                                  .meaning = "the wc's vendor_err (the HCA's own syndrome; NCCL prints it)"}};

FaultAction resolve(const ParamReader& p) {
  return VerbsAction{
      CompletionError{ib::kWcRetryExcErr, static_cast<uint32_t>(p.integer("vendor_err")), true}};
}

}  // namespace

extern const FaultKindSpec kVerbsRetryExceeded;
constinit const FaultKindSpec kVerbsRetryExceeded{
    Layer::kVerbs,
    "retry_exceeded",
    "the completion comes back IBV_WC_RETRY_EXC_ERR (12) NCCL_IB_TIMEOUT x NCCL_IB_RETRY_CNT after its post; "
    "the QP's later completions flush",
    kVerbsCompletions,
    kParams,
    resolve};

}  // namespace ncclfi::kinds
