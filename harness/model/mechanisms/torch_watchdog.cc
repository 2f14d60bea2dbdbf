// PyTorch's ProcessGroupNCCL watchdog timed out a collective or saw it fail.
#include "mechanism_spec.h"

namespace ncclfi::harness {

extern const MechanismSpec kTorchWatchdogMechanism{
    .name = "torch_watchdog",
    .noticed_by = "PyTorch's ProcessGroupNCCL watchdog timed out a collective",
    .source = "PyTorch (ProcessGroupNCCL)",
    .lines =
        {{"torch.watchdog_timeout", R"(Watchdog caught collective operation timeout)", "Watchdog caught",
          "`Watchdog caught collective operation timeout`",
          R"([rank1]:[E1202 10:00:00.123456789 ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=60000) ran for 60001 milliseconds before timing out.)"},
         {"torch.watchdog_failure", R"(failure detected by watchdog at work sequence id)",
          "failure detected by watchdog", "`failure detected by watchdog at work sequence id`",
          R"([rank0]:[E1202 10:00:00.123456789 ProcessGroupNCCL.cpp:1595] [PG ID 0 PG GUID 0(default_pg) Rank 0] failure detected by watchdog at work sequence id: 5 PG status: last enqueued work: 5, last completed work: 4)"}},
    .doc = "failure-signatures.md#21-the-watchdogs-sequence",
};

}  // namespace ncclfi::harness
