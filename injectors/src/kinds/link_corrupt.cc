// link corrupt: the node agent makes the rank's host's link corrupt packets (tc netem, where the kernel has
// it).
#include "kind_support.h"

namespace ncclfi::kinds {
namespace {

constexpr std::string_view kPoints[] = {points::kLinkCorrupt};

}  // namespace

extern const FaultKindSpec kLinkCorrupt;
constinit const FaultKindSpec kLinkCorrupt{
    Layer::kLink,
    "corrupt",
    "the host's link corrupts this share of the packets it sends (tc netem: needs sch_netem)",
    kPoints,
    kLinkPercentParams,
    resolve_link_percent<Netem::What::kCorrupt>};

}  // namespace ncclfi::kinds
