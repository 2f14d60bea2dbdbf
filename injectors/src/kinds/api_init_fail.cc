// api init_fail: communicator creation returns the code without calling NCCL.
#include "kind_support.h"

namespace ncclfi::kinds {

extern const FaultKindSpec kApiInitFail;
constinit const FaultKindSpec kApiInitFail{Layer::kApi,
                                           "init_fail",
                                           "communicator creation returns the code without calling NCCL",
                                           kApiInit,
                                           kCodeParamsSystemError,
                                           resolve_code<ApiAction, FailWithCode>};

}  // namespace ncclfi::kinds
