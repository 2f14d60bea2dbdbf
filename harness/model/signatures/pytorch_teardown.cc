// PyTorch's lines after ProcessGroupNCCL has noticed a failure: the teardown, the abort, the flight
// recorder's dump. Evidence: the detection is the watchdog's or NCCL's line before them.
#include "signature_family.h"

namespace ncclfi::harness {

extern const SignatureFamily kPytorchTeardownFamily{
    .name = "pytorch_teardown",
    .title = "PyTorch tearing a process down",
    .software = "PyTorch (ProcessGroupNCCL)",
    .lines =
        {{.id = "torch.teardown",
          .regex = R"(taking the entire process down)",
          .shown = "`To avoid data inconsistency, we are taking the entire process down.`",
          .example =
              R"([rank0]:[E1202 10:00:00.123456789 ProcessGroupNCCL.cpp:694] [Rank 0] To avoid data inconsistency, we are taking the entire process down.)",
          .role = SignatureRole::kEvidence,
          .implies = "torch_teardown",
          .format = R"(To avoid data inconsistency, we are taking the entire process down.)",
          .versions = "PyTorch 1.8 to 2.11",
          .cited =
              "pytorch/pytorch torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (WorkNCCL::handleException)",
          .meaning =
              "the process ends itself after a failed or timed-out collective (async error handling on)",
          .printed_by = "every rank whose collective failed"},
         {.id = "torch.dist_backend_error",
          .regex = R"(terminate called after throwing an instance of 'c10::DistBackendError')",
          .must_contain = "DistBackendError",
          .shown = "`terminate called after throwing an instance of 'c10::DistBackendError'`",
          .example = R"(terminate called after throwing an instance of 'c10::DistBackendError')",
          .role = SignatureRole::kEvidence,
          .implies = "torch_teardown",
          .versions = "PyTorch 2.0 to 2.11 (C++ runtime's text)",
          .cited = "the C++ runtime (std::terminate) on ProcessGroupNCCL's watchdog exception",
          .meaning = "the watchdog thread's exception ended the process (SIGABRT, exit status 134)",
          .printed_by = "every rank whose watchdog threw"},
         {.id = "torch.comm_aborted",
          .regex = R"(NCCL communicator was aborted on rank \d+)",
          .must_contain = "communicator was aborted",
          .shown = "`NCCL communicator was aborted on rank <N>`",
          .example = "NCCL communicator was aborted on rank 3.",
          .role = SignatureRole::kEvidence,
          .implies = "nccl_comm_aborted",
          .versions = "PyTorch 1.10 to 2.11",
          .cited = "pytorch/pytorch torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp",
          .meaning = "a later collective met a communicator that the watchdog had already aborted",
          .printed_by = "every rank whose communicator was aborted"},
         {.id = "torch.flight_recorder",
          .regex = R"(Observed flight recorder dump signal)",
          .must_contain = "flight recorder",
          .shown = "`Observed flight recorder dump signal from another rank via TCPStore`",
          .example = "Observed flight recorder dump signal from another rank via TCPStore.",
          .role = SignatureRole::kEvidence,
          .implies = "torch_dump",
          .versions = "PyTorch 2.3 to 2.11",
          .cited = "pytorch/pytorch torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (the heartbeat monitor)",
          .meaning = "another rank's watchdog failed first and asked every rank to dump its flight recorder",
          .printed_by = "the ranks that did not fail first"}},
};

}  // namespace ncclfi::harness
