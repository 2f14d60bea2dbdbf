// The libfabric net plugin (aws-ofi-nccl: EFA on AWS, also Slingshot's CXI): a request completed with a
// libfabric error. The plugin fails the request, and NCCL reports it through ncclCommGetAsyncError:
// an async_error detection. The text in parentheses is the provider's: EFA's "Unresponsive remote"
// or "Unreachable remote", CXI's UNDELIVERABLE.
#include "signature_family.h"

namespace ncclfi::harness {

extern const SignatureFamily kAwsOfiFamily{
    .name = "aws_ofi",
    .title = "The libfabric net plugin (aws-ofi-nccl)",
    .software = "aws-ofi-nccl, through NCCL's logger (`NET/OFI ` prefix)",
    .lines =
        {{.id = "ofi.request_completed_with_error",
          .regex = R"(NET/OFI Request (?:\S+ )?(?:seq \d+ |\(\w+\) )?completed with error)",
          .must_contain = "completed with error",
          .shown = "`NET/OFI Request <p> completed with error. RC: <n>. Error: <n> (<provider text>). ...`",
          .example =
              R"(node7:31337:31402 [2] NCCL WARN NET/OFI Request 0x7f1c2c0a8b40 completed with error. RC: 5. Error: 2 (UNDELIVERABLE). Completed length: 0, Request: { dev: 0, size: 0, state: CREATED, type: RECV })",
          .implies = "async_error",
          .format =
              "Request %p completed with error. RC: %d. Error: %d (%s). Completed length: %ld, Request: %s",
          .versions =
              "aws-ofi-nccl 1.10.0 to 1.18.0 (`Error: %s` from 1.3.0; `seq %d` in rdma from 1.17.0; "
              "`Flags: %ld` from 1.19.0; `Request %p (%s) completed with error: err: %d, ...` from 1.21.0)",
          .cited = "aws/aws-ofi-nccl src/nccl_ofi_rdma.cpp, src/nccl_ofi_sendrecv.cpp, "
                   "include/nccl_ofi_platform.h "
                   "(1.21); the provider texts: ofiwg/libfabric prov/efa/src/efa_errno.h, prov/cxi",
          .reported = "aws/aws-ofi-nccl#161 (`Request completed with error. RC: 21. Error: unknown error`)",
          .meaning = "a libfabric request failed: the remote stopped answering or was never reachable "
                     "(EFA), the fabric could not deliver (CXI UNDELIVERABLE)",
          .site = "nic,dead_rank,configuration",
          .printed_by =
              "the rank whose endpoint got the error completion, usually a peer of the failed node"},
         {.id = "ofi.remote_write_error",
          .regex = R"(NET/OFI (?:Remote write|Fatal: (?:Bounce buffer|rx buffer) recv) completed with error)",
          .must_contain = "completed with error",
          .shown = "`NET/OFI Remote write completed with error. RC: <n>. ...`",
          .example =
              R"(node7:31337:31402 [2] NCCL WARN NET/OFI Remote write completed with error. RC: 113. Flags: 0. Error: 15 (Unreachable remote - never received a response). Completed length: 0)",
          .implies = "async_error",
          .format =
              "Remote write completed with error. RC: %d. Flags: %ld. Error: %d (%s). Completed length: %ld",
          .versions = "aws-ofi-nccl 1.15.0 to 1.21 (without Flags before 1.19.0); `Fatal: rx buffer recv "
                      "completed with error` from 1.14.0",
          .cited = "aws/aws-ofi-nccl src/nccl_ofi_rdma.cpp",
          .meaning = "an RDMA write or a receive buffer's completion failed in the plugin",
          .site = "nic,dead_rank,configuration",
          .printed_by = "the rank whose endpoint got the error completion"}},
};

}  // namespace ncclfi::harness
