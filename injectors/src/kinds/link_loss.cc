// link loss: the node agent makes the rank's host's link loss packets (tc netem, where the kernel has it).
#include "kind_support.h"

namespace ncclfi::kinds {
namespace {

constexpr std::string_view kPoints[] = {"link/loss"};

constexpr ParamSpec kParams[] = {{.name = "percent",
                                  .type = ParamType::kPositiveNumber,
                                  .required = true,
                                  .meaning = "of the packets, up to 100"}};

FaultAction resolve(const ParamReader& p) {
  const double percent = p.number("percent");
  if (percent > 100) p.fail("percent", "a share of packets from 0 to 100");
  return LinkAction{Netem{Netem::What::kLoss, percent, 0}};
}

}  // namespace

extern const FaultKindSpec kLinkLoss;
constinit const FaultKindSpec kLinkLoss{
    Layer::kLink,
    "loss",
    "the host's link loses this share of the packets it sends (tc netem: needs sch_netem)",
    kPoints,
    kParams,
    resolve};

}  // namespace ncclfi::kinds
