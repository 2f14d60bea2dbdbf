// net connect_fail: connect/accept returns the code and no connection.
#include "kind_support.h"

namespace ncclfi::kinds {

extern const FaultKindSpec kNetConnectFail;
constinit const FaultKindSpec kNetConnectFail{
    Layer::kNet,  "connect_fail",         "connect/accept returns the code and no connection",
    kNetConnects, kCodeParamsSystemError, resolve_code<NetAction, ConnectFail>};

}  // namespace ncclfi::kinds
