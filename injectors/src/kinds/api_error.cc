// api error: returns the code without calling NCCL.
#include "kind_support.h"

namespace ncclfi::kinds {
namespace {

constexpr ParamSpec kParams[] = {{.name = "code",
                                  .type = ParamType::kNcclError,
                                  .default_json = R"("ncclInternalError")",
                                  .meaning = "the ncclResult_t returned"}};

FaultAction resolve(const ParamReader& p) {
  return ApiAction{FailWithCode{p.code("code")}};
}

}  // namespace

extern const FaultKindSpec kApiError;
constinit const FaultKindSpec kApiError{Layer::kApi,        "error", "returns the code without calling NCCL",
                                        kApiOpsAndGroupEnd, kParams, resolve};

}  // namespace ncclfi::kinds
