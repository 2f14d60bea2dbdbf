// net error: isend/irecv/test returns the code.
#include "kind_support.h"

namespace ncclfi::kinds {
namespace {

constexpr std::string_view kNetErrorPoints[] = {points::kNetIsend, points::kNetIrecv, points::kNetTest};

}  // namespace

extern const FaultKindSpec kNetError;
constinit const FaultKindSpec kNetError{Layer::kNet,
                                        "error",
                                        "isend/irecv/test returns the code",
                                        kNetErrorPoints,
                                        kCodeParamsSystemError,
                                        resolve_code<NetAction, FailWithCode>};

}  // namespace ncclfi::kinds
