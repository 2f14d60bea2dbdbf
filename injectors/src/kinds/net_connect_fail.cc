// net connect_fail: connect/accept returns the code and no connection.
#include "kind_support.h"

namespace ncclfi::kinds {
namespace {

constexpr ParamSpec kParams[] = {{.name = "code",
                                  .type = ParamType::kNcclError,
                                  .default_json = R"("ncclSystemError")",
                                  .meaning = "the ncclResult_t returned"}};

FaultAction resolve(const ParamReader& p) {
  return NetAction{ConnectFail{p.code("code")}};
}

}  // namespace

extern const FaultKindSpec kNetConnectFail;
constinit const FaultKindSpec kNetConnectFail{
    Layer::kNet,  "connect_fail", "connect/accept returns the code and no connection",
    kNetConnects, kParams,        resolve};

}  // namespace ncclfi::kinds
