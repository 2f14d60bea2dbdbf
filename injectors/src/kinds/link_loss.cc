// link loss: the node agent makes the rank's host's link lose packets (tc netem, where the kernel has it).
#include "kind_support.h"

namespace ncclfi::kinds {
namespace {

constexpr std::string_view kPoints[] = {points::kLinkLoss};

}  // namespace

extern const FaultKindSpec kLinkLoss;
constinit const FaultKindSpec kLinkLoss{
    Layer::kLink,
    "loss",
    "the host's link loses this share of the packets it sends (tc netem: needs sch_netem)",
    kPoints,
    kLinkPercentParams,
    resolve_link_percent<Netem::What::kLoss>};

}  // namespace ncclfi::kinds
