// The launcher noticed a dead rank and tore the job down.
#include "mechanism_spec.h"

namespace ncclfi::harness {

extern const MechanismSpec kLauncherTeardownMechanism{
    .name = "launcher_teardown",
    .noticed_by = "the launcher noticed a dead rank and tore the job down",
    .source = "torchrun, Open MPI",
    .lines =
        {{"torchrun.worker_failed", R"(failed \(exitcode: -?\d+\) local_rank)", "failed (exitcode",
          "torchrun's `failed (exitcode: <N>) local_rank`",
          R"(E1202 10:00:00.123000 1234 torch/distributed/elastic/multiprocessing/api.py:882] failed (exitcode: -9) local_rank: 0 (pid: 4321) of binary: /usr/bin/python3)"},
         {"torchrun.child_failed", R"(ChildFailedError)", "ChildFailedError", "`ChildFailedError`",
          R"(torch.distributed.elastic.multiprocessing.errors.ChildFailedError: )"},
         {"mpirun.noticed",
          R"(mpirun noticed that process rank \d+ with PID \d+ on node \S+ exited on signal)",
          "mpirun noticed",
          "Open MPI's `mpirun noticed that process rank <N> with PID <N> on node <host> exited on signal`",
          R"(mpirun noticed that process rank 1 with PID 4321 on node node2 exited on signal 9 (Killed).)"},
         {"mpirun.nonzero", R"(mpirun detected that one or more processes exited with non-zero status)",
          "mpirun detected", "`mpirun detected that one or more processes exited with non-zero status`",
          R"(mpirun detected that one or more processes exited with non-zero status, thus causing)"}},
    .doc = "failure-signatures.md#3-process-fates-and-launchers",
};

}  // namespace ncclfi::harness
