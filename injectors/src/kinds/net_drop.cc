// net drop: a completion is never reported: the request stays pending for ever.
#include "kind_support.h"

namespace ncclfi::kinds {
namespace {

FaultAction resolve(const ParamReader& /*p*/) {
  return NetAction{Drop{}};
}

}  // namespace

extern const FaultKindSpec kNetDrop;
constinit const FaultKindSpec kNetDrop{
    Layer::kNet, "drop", "a completion is never reported: the request stays pending for ever",
    kNetPosts,   {},     resolve};

}  // namespace ncclfi::kinds
