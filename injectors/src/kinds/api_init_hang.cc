// api init_hang: communicator creation blocks (for ms, then goes on, or for ever).
#include "kind_support.h"

namespace ncclfi::kinds {

extern const FaultKindSpec kApiInitHang;
constinit const FaultKindSpec kApiInitHang{Layer::kApi,
                                           "init_hang",
                                           "communicator creation blocks (for ms, then goes on, or for ever)",
                                           kApiInit,
                                           kHangMsParams,
                                           resolve_hang<Hang>,
                                           {.duration_param = "ms"}};

}  // namespace ncclfi::kinds
