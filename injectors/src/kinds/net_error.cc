// net error: isend/irecv/test returns the code.
#include "kind_support.h"

namespace ncclfi::kinds {
namespace {

constexpr std::string_view kNetErrorPoints[] = {"net/isend", "net/irecv", "net/test"};

constexpr ParamSpec kParams[] = {{.name = "code",
                                  .type = ParamType::kNcclError,
                                  .default_json = R"("ncclSystemError")",
                                  .meaning = "the ncclResult_t returned"}};

FaultAction resolve(const ParamReader& p) {
  return NetAction{FailWithCode{p.code("code")}};
}

}  // namespace

extern const FaultKindSpec kNetError;
constinit const FaultKindSpec kNetError{Layer::kNet,     "error", "isend/irecv/test returns the code",
                                        kNetErrorPoints, kParams, resolve};

}  // namespace ncclfi::kinds
