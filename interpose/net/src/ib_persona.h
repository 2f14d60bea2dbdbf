// The shim's persona: what it calls itself and how its failures read in a rank's output.
//   plain  (default)  the plugin is "ncclfi"; its own notes say "NET/ncclfi : ..."; a lost connection fails
//                     at once with the transport's error.
//   ib     (NCCLFI_NET_PERSONA=ib, and always under NCCLFI_QUIET)  the plugin calls itself "IB", as NCCL's
//                     own InfiniBand transport does, and fails as it does: a connection whose other end went
//                     away (a dead NIC, a dead process) fails its requests only once the IB retry budget
//                     (NCCL_IB_TIMEOUT, NCCL_IB_RETRY_CNT) has passed, with the completion-error WARN that
//                     the NCCL release in use prints for IBV_WC_RETRY_EXC_ERR; the shim writes nothing in its
//                     own name beyond what NCCL's IB transport would.
// In both personas nic_down leaves the IB completion-error lines on the rank whose NIC died.
#pragma once

#include <string>

#include "ncclfi_net/ib_completion_lines.h"

namespace ncclfi::net {

bool ib_persona();
// "IB" in the IB persona, else "ncclfi": the name NCCL knows the plugin by (NCCL_NET selects it by it).
const char* plugin_name();
// The NCCL release whose lines the IB persona writes: NCCLFI_NCCL_VERSION ("2.28.7" or an ncclGetVersion
// code such as 22807), else ncclGetVersion() of the libnccl loaded in this process, else the newest
// release the line table knows. Read once.
NcclVersion nccl_version_for_lines();
// The local HCA a rank's failures name: mlx5_<index mod 8>, the index being the rank's on its node
// (LOCAL_RANK), else its rank: one NIC per GPU, as on DGX-class hosts.
std::string hca_name_for_rank(int rank, int local_rank);

}  // namespace ncclfi::net
