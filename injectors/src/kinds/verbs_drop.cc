// verbs drop: a work completion is never reported.
#include "kind_support.h"

namespace ncclfi::kinds {
namespace {

FaultAction resolve(const ParamReader& /*p*/) {
  return VerbsAction{Drop{}};
}

}  // namespace

extern const FaultKindSpec kVerbsDrop;
constinit const FaultKindSpec kVerbsDrop{
    Layer::kVerbs,
    "drop",
    "ibv_poll_cq never reports the completion (the work request stays outstanding)",
    kVerbsCompletions,
    {},
    resolve};

}  // namespace ncclfi::kinds
