// verbs port_down: ibv_query_port reports the port down from the firing on.
#include "kind_support.h"

namespace ncclfi::kinds {
namespace {

FaultAction resolve(const ParamReader& /*p*/) {
  return VerbsAction{PortDown{}};
}

}  // namespace

extern const FaultKindSpec kVerbsPortDown;
constinit const FaultKindSpec kVerbsPortDown{
    Layer::kVerbs,
    "port_down",
    "ibv_query_port reports state IBV_PORT_DOWN (phys_state Disabled) from then on",
    kVerbsQueryPort,
    {},
    resolve};

}  // namespace ncclfi::kinds
