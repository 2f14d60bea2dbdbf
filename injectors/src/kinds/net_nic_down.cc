// net nic_down: the NIC stops answering, as a dead port or a pulled cable does. Its queue pairs keep
// retrying until the InfiniBand retry budget is spent (NCCL_IB_TIMEOUT x NCCL_IB_RETRY_CNT, the rank's
// own settings: ib_retry_budget.h), then every request reports the error NCCL's IB transport returns for
// a completion with IBV_WC_RETRY_EXC_ERR (ncclRemoteError). Nothing completes in between. Links to ranks
// of the same node never crossed the NIC (on a cluster they are NVLink or PCIe): the shim spares them.
#include "kind_support.h"

namespace ncclfi::kinds {
namespace {

constexpr ParamSpec kParams[] = {{.name = "code",
                                  .type = ParamType::kNcclError,
                                  .default_json = R"("ncclRemoteError")",
                                  .meaning = "the ncclResult_t returned once the retries are spent"}};

FaultAction resolve(const ParamReader& p) {
  return NetAction{RetryExhausted{p.code("code")}};
}

}  // namespace

extern const FaultKindSpec kNetNicDown;
constinit const FaultKindSpec kNetNicDown{
    Layer::kNet,
    "nic_down",
    "nothing completes; each request fails with code after the IB retry budget (NCCL_IB_TIMEOUT, "
    "NCCL_IB_RETRY_CNT); links to ranks of the same node (launcher.hostnames) are spared",
    kNetPosts,
    kParams,
    resolve};

}  // namespace ncclfi::kinds
