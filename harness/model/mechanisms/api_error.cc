// An NCCL call returned an error code.
#include "mechanism_spec.h"
#include "ncclfi/workload_contract.h"

namespace ncclfi::harness {

extern const MechanismSpec kApiErrorMechanism{
    .name = "api_error",
    .noticed_by = "an NCCL call returned an error",
    .source = "NCCL, through PyTorch, nccl-tests or the workload",
    .events = "`nccl_error`",
    .exit_code = kExitNcclError,
    .lines =
        {{"nccl.error_in", R"(NCCL error in: )", "NCCL error", "PyTorch's `NCCL error in: `",
          R"(torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3356, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.28.9)"},
         {"nccl_tests.nccl_failure", R"(Test NCCL failure )", "Test NCCL failure",
          "nccl-tests' `Test NCCL failure `",
          R"(gpu01: Test NCCL failure all_reduce.cu:44 'unhandled system error (run with NCCL_DEBUG=INFO for details) / ')"},
         {"nccl.result_name",
          R"(\bnccl(SystemError|InternalError|UnhandledCudaError|InvalidUsage|InvalidArgument|RemoteError)\b)",
          "nccl",
          "a result code name `ncclSystemError`, `ncclInternalError`, `ncclUnhandledCudaError`, "
          "`ncclInvalidUsage`, `ncclInvalidArgument` or `ncclRemoteError` as a word",
          R"(ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.)"},
         {"nccl.result_text",
          R"(unhandled system error|unhandled cuda error|internal error - please report this issue)", "",
          "NCCL's texts `unhandled system error`, `unhandled cuda error`, "
          "`internal error - please report this issue`",
          R"(Error: unhandled cuda error (run with NCCL_DEBUG=INFO for details))"},
         {"nccl.error", R"(\bNCCL error\b)", "NCCL error", "any other `NCCL error`",
          R"(RuntimeError: NCCL error: invalid usage (run with NCCL_DEBUG=WARN for details))"}},
    .doc = "failure-signatures.md#12-result-codes",
};

}  // namespace ncclfi::harness
