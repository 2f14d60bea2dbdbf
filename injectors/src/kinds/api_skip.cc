// api skip: returns ncclSuccess without calling NCCL (the peers hang).
#include "kind_support.h"

namespace ncclfi::kinds {
namespace {

FaultAction resolve(const ParamReader& /*p*/) {
  return ApiAction{Skip{}};
}

}  // namespace

extern const FaultKindSpec kApiSkip;
constinit const FaultKindSpec kApiSkip{
    Layer::kApi, "skip", "returns ncclSuccess without calling NCCL (the peers hang)", kApiOps, {}, resolve};

}  // namespace ncclfi::kinds
