// api error: returns the code without calling NCCL.
#include "kind_support.h"

namespace ncclfi::kinds {

extern const FaultKindSpec kApiError;
constinit const FaultKindSpec kApiError{Layer::kApi,
                                        "error",
                                        "returns the code without calling NCCL",
                                        kApiOpsAndGroupEnd,
                                        kCodeParamsInternalError,
                                        resolve_code<ApiAction, FailWithCode>};

}  // namespace ncclfi::kinds
