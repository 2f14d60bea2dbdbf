// api async_error: the call goes on; ncclCommGetAsyncError reports the code from then on.
#include "kind_support.h"

namespace ncclfi::kinds {
namespace {

constexpr ParamSpec kParams[] = {{.name = "code",
                                  .type = ParamType::kNcclError,
                                  .default_json = R"("ncclRemoteError")",
                                  .meaning = "the ncclResult_t reported"}};

}  // namespace

extern const FaultKindSpec kApiAsyncError;
constinit const FaultKindSpec kApiAsyncError{
    Layer::kApi, "async_error", "the call goes on; ncclCommGetAsyncError reports the code from then on",
    kApiOps,     kParams,       resolve_code<ApiAction, AsyncError>};

}  // namespace ncclfi::kinds
