// PyTorch's ProcessGroupNCCL watchdog timed out a collective or saw it fail. Its wording changed between
// releases; each wording is a line of its own, with the releases it was seen in.
#include "mechanism_spec.h"

namespace ncclfi::harness {

extern const MechanismSpec kTorchWatchdogMechanism{
    .name = "torch_watchdog",
    .noticed_by = "PyTorch's ProcessGroupNCCL watchdog timed out a collective",
    .source = "PyTorch (ProcessGroupNCCL)",
    .lines =
        {{.id = "torch.watchdog_timeout",
          .regex = R"(Watchdog caught collective operation timeout)",
          .must_contain = "Watchdog caught",
          .shown = "`Watchdog caught collective operation timeout`",
          .example =
              R"([rank1]:[E1202 10:00:00.123456789 ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=60000) ran for 60001 milliseconds before timing out.)",
          .format = "Watchdog caught collective operation timeout: <WorkNCCL(...)> ran for <ms> milliseconds "
                    "before timing out.",
          .versions = "PyTorch 1.10 to 2.11 (NumelIn/NumelOut and the `[rankN]:` prefix from about 2.2)",
          .cited =
              "pytorch/pytorch torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (WorkNCCL::checkTimeout)",
          .reported = "pytorch/pytorch#118369; mlfoundations/open_clip#1024 (PyTorch 2.5.1)",
          .meaning = "a collective did not finish within the process group's timeout",
          .site = "host_hang,gpu_hang,dead_rank,congestion",
          .printed_by = "every rank stuck in the collective, the healthy ones too"},
         {.id = "torch.watchdog_failure",
          .regex = R"(failure detected by watchdog at work sequence id)",
          .must_contain = "failure detected by watchdog",
          .shown = "`failure detected by watchdog at work sequence id`",
          .example =
              R"([rank0]:[E1202 10:00:00.123456789 ProcessGroupNCCL.cpp:1595] [PG ID 0 PG GUID 0(default_pg) Rank 0] failure detected by watchdog at work sequence id: 5 PG status: last enqueued work: 5, last completed work: 4)",
          .format =
              "<logPrefix> failure detected by watchdog at work sequence id: <seq> PG status: last enqueued "
              "work: <n>, last completed work: <n>",
          .versions = "PyTorch 2.6 to 2.11 (after 2.5.1, which printed the wording below)",
          .cited = "pytorch/pytorch torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (Watchdog::runLoop)",
          .meaning = "the watchdog found a failed or timed-out collective and is about to act on it",
          .printed_by = "every rank whose collective failed or timed out"},
         {.id = "torch.watchdog_exception",
          .regex = R"(Exception \(either an error or timeout\) detected by watchdog at work)",
          .must_contain = "detected by watchdog at work",
          .shown = "`Exception (either an error or timeout) detected by watchdog at work: <seq>`",
          .example =
              R"([PG ID 0 PG GUID 0(default_pg) Rank 7] Exception (either an error or timeout) detected by watchdog at work: 14217, last enqueued NCCL work: 14221, last completed NCCL work: 14216.)",
          .format =
              "<logPrefix>Exception (either an error or timeout) detected by watchdog at work: <seq>, last "
              "enqueued NCCL work: <n>, last completed NCCL work: <n>.",
          .versions = "PyTorch 2.3 to 2.5 (seen with 2.5.1)",
          .cited = "pytorch/pytorch torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (watchdogHandler)",
          .reported = "mlfoundations/open_clip#1024 (PyTorch 2.5.1); hiyouga/LlamaFactory#7396",
          .meaning = "the watchdog found a failed or timed-out collective and is about to act on it",
          .printed_by = "every rank whose collective failed or timed out"},
         {.id = "torch.watchdog_timeout_at_work",
          .regex = R"(\] Timeout at NCCL work: \d+, last enqueued NCCL work)",
          .must_contain = "Timeout at NCCL work",
          .shown =
              "`Timeout at NCCL work: <seq>, last enqueued NCCL work: <n>, last completed NCCL work: <n>`",
          .example =
              R"([rank2]:[E ProcessGroupNCCL.cpp:1537] [PG 0 Rank 2] Timeout at NCCL work: 1, last enqueued NCCL work: 1, last completed NCCL work: -1.)",
          .versions = "PyTorch 2.3 to 2.4",
          .cited = "pytorch/pytorch torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (watchdogHandler)",
          .reported = "vllm-project/vllm#6042",
          .meaning = "a collective did not finish within the process group's timeout",
          .site = "host_hang,gpu_hang,dead_rank,congestion",
          .printed_by = "every rank stuck in the collective"},
         {.id = "torch.watchdog_some_failed",
          .regex = R"(Some NCCL operations have failed or timed out)",
          .must_contain = "Some NCCL operations",
          .shown = "`Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA "
                   "kernels, ...`",
          .example =
              R"([rank1]:[E ProcessGroupNCCL.cpp:577] [Rank 1] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.)",
          .format = "Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA "
                    "kernels, "
                    "subsequent GPU operations might run on corrupted/incomplete data.",
          .versions = "PyTorch 1.8 to 2.11 (without the `[Rank N]` prefix before about 2.2)",
          .cited =
              "pytorch/pytorch torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (WorkNCCL::handleException)",
          .reported = "vllm-project/vllm#6042",
          .meaning =
              "the watchdog's handling of a failed or timed-out collective: the process is about to end",
          .printed_by = "every rank whose collective failed or timed out"}},
    .doc = "failure-signatures.md#21-the-watchdogs-sequence",
};

}  // namespace ncclfi::harness
