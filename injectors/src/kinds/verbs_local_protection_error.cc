// verbs local_protection_error: a completion comes back IBV_WC_LOC_PROT_ERR (4) at once, the error an HCA
// gives when it cannot reach memory it registered. With GPU buffers that is GPUDirect RDMA broken on the
// node: PCIe ACS or the IOMMU between the NIC and the GPU, or the peer-memory module missing. NCCL prints
// it as "NET/IB : Got completion from peer ... with error 4, ... vendor err 81" (NVIDIA/nccl#928, #1052):
// vendor err 81 is the default here for that reason.
#include "kind_support.h"
#include "ncclfi/ib_verbs_codes.h"

namespace ncclfi::kinds {
namespace {

constexpr ParamSpec kParams[] = {{.name = "vendor_err",
                                  .type = ParamType::kNonNegInt,
                                  .default_json = R"(81)",
                                  .meaning = "the wc's vendor_err (the HCA's own syndrome; NCCL prints it)"}};

FaultAction resolve(const ParamReader& p) {
  constexpr int kLocProtErr = ib::code_of(ib::kWcStatuses, "IBV_WC_LOC_PROT_ERR").value();
  return VerbsAction{CompletionError{kLocProtErr, static_cast<uint32_t>(p.integer("vendor_err")), false}};
}

}  // namespace

extern const FaultKindSpec kVerbsLocalProtectionError;
constinit const FaultKindSpec kVerbsLocalProtectionError{
    Layer::kVerbs,
    "local_protection_error",
    "the completion comes back IBV_WC_LOC_PROT_ERR (4) at once, as when GPUDirect RDMA is blocked (PCIe ACS, "
    "the IOMMU); the QP's later completions flush",
    kVerbsCompletions,
    kParams,
    resolve};

}  // namespace ncclfi::kinds
