// api nvlink_down: the node's NVLink (and any peer-to-peer) path is gone when the communicator is created, as
// when NVLink links are down: NCCL_P2P_DISABLE=1 is set in the rank's environment before NCCL reads it, so
// NCCL connects local GPUs through host shared memory. Only the faulted run's ranks see it; the baseline
// keeps NVLink.
#include "kind_support.h"

namespace ncclfi::kinds {
namespace {

FaultAction resolve(const ParamReader&) {
  return ApiAction{TopologyChange{.p2p_off = true, .pcie_width = std::nullopt, .pcie_speed = std::nullopt}};
}

}  // namespace

extern const FaultKindSpec kApiNvlinkDown;
constinit const FaultKindSpec kApiNvlinkDown{
    Layer::kApi,
    "nvlink_down",
    "at communicator creation: no NVLink/P2P path (NCCL_P2P_DISABLE=1 before NCCL reads it): local GPUs "
    "connect through shared memory",
    kApiInit,
    {},
    resolve};

}  // namespace ncclfi::kinds
