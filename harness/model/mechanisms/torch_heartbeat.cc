// PyTorch's heartbeat monitor found the watchdog itself stuck, and ended the process.
#include "mechanism_spec.h"

namespace ncclfi::harness {

extern const MechanismSpec kTorchHeartbeatMechanism{
    .name = "torch_heartbeat",
    .noticed_by = "PyTorch's heartbeat monitor found the watchdog itself stuck",
    .source = "PyTorch (ProcessGroupNCCL)",
    .lines =
        {{"torch.heartbeat_stuck", R"(ProcessGroupNCCL's watchdog got stuck for \d+ seconds)",
          "watchdog got stuck", "`ProcessGroupNCCL's watchdog got stuck for <N> seconds`",
          R"([rank0]:[E1202 10:00:00.123456789 ProcessGroupNCCL.cpp:1423] [PG ID 0 PG GUID 0(default_pg) Rank 0] ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in monitoring enqueued collectives.)",
          SignatureRole::kDetection, "", "", "PyTorch 2.3 to 2.11",
          "pytorch/pytorch torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (HeartbeatMonitor)", "",
          "the watchdog thread itself made no progress: stuck in a CUDA or NCCL call", "gpu_hang,host_hang",
          "the rank whose watchdog is stuck"},
         // The monitor's kill, whatever woke it: "due to ProcessGroupNCCL watchdog hang" (no heartbeat) or
         // "due to collective timeout or exception" (a timeout signalled a dump, and the watchdog did not
         // end the process within the heartbeat timeout after it, e.g. stuck in ncclCommAbort: seen on
         // PyTorch 2.11).
         {"torch.heartbeat_terminate",
          R"(Terminating the process after attempting to dump debug info, due to)",
          "Terminating the process after attempting",
          "`Terminating the process after attempting to dump debug info, due to`",
          R"([rank0]:[F1202 10:00:00.123456789 ProcessGroupNCCL.cpp:1306] [PG ID 0 PG GUID 0(default_pg) Rank 0] [PG ID 0 PG GUID 0(default_pg) Rank 0] Terminating the process after attempting to dump debug info, due to ProcessGroupNCCL watchdog hang.)",
          SignatureRole::kDetection, "", "", "PyTorch 2.3 to 2.11",
          "pytorch/pytorch torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (HeartbeatMonitor)", "",
          "the heartbeat monitor ends the process after trying to dump debug info", "gpu_hang,host_hang",
          "the rank the monitor ends"},
         // The older wording.
         {"torch.heartbeat_timeout", R"(Heartbeat monitor timed out)", "Heartbeat monitor",
          "`Heartbeat monitor timed out`",
          R"([Rank 0] Heartbeat monitor timed out! Process will be terminated after dumping debug info. workMetaList_.size()=1)",
          SignatureRole::kDetection, "", "", "PyTorch 2.2 (the older wording)",
          "pytorch/pytorch torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp", "",
          "the watchdog thread made no progress within the heartbeat timeout", "gpu_hang,host_hang",
          "the rank whose watchdog is stuck"}},
    .doc = "failure-signatures.md#22-the-heartbeat-monitor",
};

}  // namespace ncclfi::harness
