// NCCL reported an asynchronous error: ncclCommGetAsyncError, or the net plugin failing a request.
#include "mechanism_spec.h"
#include "ncclfi/workload_contract.h"

namespace ncclfi::harness {

extern const MechanismSpec kAsyncErrorMechanism{
    .name = "async_error",
    .noticed_by = "NCCL reported an asynchronous error (`ncclCommGetAsyncError`, or the net plugin)",
    .source = "NCCL, through PyTorch or the workload",
    .events = "`async_error`",
    .exit_code = kExitAsyncError,
    // PyTorch's watchdog prefixes NCCL's text with "NCCL error: "; both count.
    .lines =
        {{"nccl.remote_error_async", R"(NCCL error: remote process exited or there was a network error)",
          "remote process exited",
          "PyTorch's `NCCL error: remote process exited or there was a network error`",
          R"([rank1]:[E1202 10:00:00.123456789 ProcessGroupNCCL.cpp:1896] [PG ID 0 PG GUID 0(default_pg) Rank 1] Process group watchdog thread terminated with exception: NCCL error: remote process exited or there was a network error, NCCL version 2.28.9)",
          SignatureRole::kDetection, "", "NCCL error: %s, NCCL version %s",
          "PyTorch 2.x with NCCL 2.13.4 to 2.30",
          "pytorch/pytorch torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp; NVIDIA/nccl src/init.cc "
          "(ncclGetErrorString of ncclRemoteError)",
          "hiyouga/LlamaFactory#6849", "a peer died or the link to it failed, found by ncclCommGetAsyncError",
          "dead_rank,nic,degraded_link", "the peers of the failed rank"},
         {"nccl.remote_error", R"(remote process exited or there was a network error)",
          "remote process exited", "NCCL's own `remote process exited or there was a network error`",
          R"(  what():  remote process exited or there was a network error)", SignatureRole::kDetection, "",
          "remote process exited or there was a network error", "NCCL 2.13.4 to 2.30",
          "NVIDIA/nccl src/init.cc (ncclGetErrorString of ncclRemoteError)", "",
          "a peer died or the link to it failed", "dead_rank,nic,degraded_link",
          "the peers of the failed rank"}},
    .doc = "failure-signatures.md#11-log-lines",
};

}  // namespace ncclfi::harness
