// api bandwidth_cap: a slower link (a PCIe link trained down to fewer lanes or an older generation) at the
// API layer: each op's stream is held after the op until the op has taken as long as its bus bytes need at
// that rate, so the job sees the effective bandwidth of the narrower link and nothing else.
#include "kind_support.h"

namespace ncclfi::kinds {
namespace {

constexpr ParamSpec kParams[] = {
    {.name = "gb_per_s",
     .type = ParamType::kPositiveNumber,
     .required = true,
     .meaning =
         "the cap on each op's bus bandwidth, GB/s as nccl-tests reports busbw (PCIe Gen4 x16 is about 24 "
         "in NCCL's model, Gen4 x4 about 6)"}};

FaultAction resolve(const ParamReader& p) {
  return ApiAction{BandwidthCap{p.number("gb_per_s")}};
}

}  // namespace

extern const FaultKindSpec kApiBandwidthCap;
// Only the ops: the hold goes on the op's stream. Use trigger count 0 to cap every op from then on.
constinit const FaultKindSpec kApiBandwidthCap{
    Layer::kApi,
    "bandwidth_cap",
    "each op's stream is held until the op took its bus bytes / gb_per_s (a narrower or slower link)",
    kApiOps,
    kParams,
    resolve,
    {.rate = true}};

}  // namespace ncclfi::kinds
