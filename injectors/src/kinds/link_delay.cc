// link delay: the node agent delays every packet the rank's host sends (tc netem, where the kernel has it).
#include "kind_support.h"

namespace ncclfi::kinds {
namespace {

constexpr std::string_view kPoints[] = {points::kLinkDelay};

constexpr ParamSpec kParams[] = {
    {.name = "ms",
     .type = ParamType::kPositiveNumber,
     .required = true,
     .meaning = "the delay of each packet"},
    {.name = "jitter_ms", .type = ParamType::kNonNegNumber, .default_json = "0", .meaning = "its variation"}};

FaultAction resolve(const ParamReader& p) {
  return LinkAction{Netem{Netem::What::kDelay, p.number("ms"), p.number("jitter_ms")}};
}

}  // namespace

extern const FaultKindSpec kLinkDelay;
constinit const FaultKindSpec kLinkDelay{
    Layer::kLink, "delay", "the host's link delays every packet it sends (tc netem: needs sch_netem)",
    kPoints,      kParams, resolve};

}  // namespace ncclfi::kinds
