// api init_fail: communicator creation returns the code without calling NCCL.
#include "kind_support.h"

namespace ncclfi::kinds {
namespace {

constexpr ParamSpec kParams[] = {{.name = "code",
                                  .type = ParamType::kNcclError,
                                  .default_json = R"("ncclSystemError")",
                                  .meaning = "the ncclResult_t returned"}};

FaultAction resolve(const ParamReader& p) {
  return ApiAction{FailWithCode{p.code("code")}};
}

}  // namespace

extern const FaultKindSpec kApiInitFail;
constinit const FaultKindSpec kApiInitFail{
    Layer::kApi, "init_fail", "communicator creation returns the code without calling NCCL",
    kApiInit,    kParams,     resolve};

}  // namespace ncclfi::kinds
