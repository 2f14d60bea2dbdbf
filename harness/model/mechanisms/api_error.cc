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
          R"(torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3356, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.28.9)",
          SignatureRole::kDetection, "", "NCCL error in: %s:%d, %s, NCCL version %s", "PyTorch 1.x to 2.11",
          "pytorch/pytorch torch/csrc/distributed/c10d/NCCLUtils.hpp (C10D_NCCL_CHECK)",
          "aws/aws-ofi-nccl#927", "an NCCL call returned an error; the text says which", "",
          "the rank whose call failed"},
         {"nccl_tests.nccl_failure", R"(Test NCCL failure )", "Test NCCL failure",
          "nccl-tests' `Test NCCL failure `",
          R"(gpu01: Test NCCL failure all_reduce.cu:44 'unhandled system error (run with NCCL_DEBUG=INFO for details) / ')",
          SignatureRole::kDetection, "", "%s: Test NCCL failure %s:%d '%s / %s'", "nccl-tests 2.x",
          "NVIDIA/nccl-tests src/common.h (NCCLCHECK)", "", "an NCCL call of nccl-tests returned an error",
          "", "the rank whose call failed"},
         {"nccl.result_name",
          R"(\bnccl(SystemError|InternalError|UnhandledCudaError|InvalidUsage|InvalidArgument|RemoteError)\b)",
          "nccl",
          "a result code name `ncclSystemError`, `ncclInternalError`, `ncclUnhandledCudaError`, "
          "`ncclInvalidUsage`, `ncclInvalidArgument` or `ncclRemoteError` as a word",
          R"(ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.)",
          SignatureRole::kDetection, "", "", "NCCL 2.x (ncclRemoteError from 2.13.4)",
          "NVIDIA/nccl src/nccl.h.in (ncclResult_t)", "", "a program printed the name of an NCCL error code",
          "", "the rank whose call failed"},
         {"nccl.result_text",
          R"(unhandled system error|unhandled cuda error|internal error - please report this issue)", "",
          "NCCL's texts `unhandled system error`, `unhandled cuda error`, "
          "`internal error - please report this issue`",
          R"(Error: unhandled cuda error (run with NCCL_DEBUG=INFO for details))", SignatureRole::kDetection,
          "", "", "NCCL 2.10 to 2.30 (the `(run with NCCL_DEBUG=...)` suffixes from 2.18.1)",
          "NVIDIA/nccl src/init.cc (ncclGetErrorString)", "",
          "a program printed the text of an NCCL error code", "", "the rank whose call failed"},
         {"nccl.error", R"(\bNCCL error\b)", "NCCL error", "any other `NCCL error`",
          R"(RuntimeError: NCCL error: invalid usage (run with NCCL_DEBUG=WARN for details))",
          SignatureRole::kDetection, "", "", "PyTorch, NCCL wrappers",
          "pytorch/pytorch torch/csrc/distributed/c10d/NCCLUtils.hpp", "", "an NCCL error of some kind", "",
          "the rank whose call failed"}},
    .doc = "failure-signatures.md#12-result-codes",
};

}  // namespace ncclfi::harness
