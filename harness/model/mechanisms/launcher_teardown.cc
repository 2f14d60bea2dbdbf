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
          R"(E1202 10:00:00.123000 1234 torch/distributed/elastic/multiprocessing/api.py:882] failed (exitcode: -9) local_rank: 0 (pid: 4321) of binary: /usr/bin/python3)",
          SignatureRole::kDetection, "", "failed (exitcode: %s) local_rank: %s (pid: %s) of binary: %s",
          "PyTorch 1.9 to 2.11", "pytorch/pytorch torch/distributed/elastic/multiprocessing/api.py", "",
          "a worker ended with a failing status or a signal (-9: SIGKILL; -6: SIGABRT, as after a watchdog)",
          "dead_rank", "torchrun, on the worker's node"},
         {"torchrun.child_failed", R"(ChildFailedError)", "ChildFailedError", "`ChildFailedError`",
          R"(torch.distributed.elastic.multiprocessing.errors.ChildFailedError: )", SignatureRole::kDetection,
          "", "", "PyTorch 1.9 to 2.11",
          "pytorch/pytorch torch/distributed/elastic/multiprocessing/errors/__init__.py", "",
          "torchrun's summary of the workers that failed", "dead_rank", "torchrun"},
         {"mpirun.noticed",
          R"(mpirun noticed that process rank \d+ with PID \d+ on node \S+ exited on signal)",
          "mpirun noticed",
          "Open MPI's `mpirun noticed that process rank <N> with PID <N> on node <host> exited on signal`",
          R"(mpirun noticed that process rank 1 with PID 4321 on node node2 exited on signal 9 (Killed).)",
          SignatureRole::kDetection, "",
          "%s noticed that process rank %lu with PID %lu on node %s exited on signal %d (%s).",
          "Open MPI 4 to 5 (PRRTE's help text)",
          "openpmix/prrte src/prted/help-prun.txt (proc-aborted-strsignal)", "",
          "a rank died of a signal and mpirun ended the job", "dead_rank", "mpirun"},
         {"mpirun.nonzero", R"(mpirun detected that one or more processes exited with non-zero status)",
          "mpirun detected", "`mpirun detected that one or more processes exited with non-zero status`",
          R"(mpirun detected that one or more processes exited with non-zero status, thus causing)",
          SignatureRole::kDetection, "", "", "Open MPI 4 to 5", "open-mpi/ompi (mpirun's help text)", "",
          "a rank exited with a failing status and mpirun ended the job", "dead_rank", "mpirun"}},
    .doc = "failure-signatures.md#3-process-fates-and-launchers",
};

}  // namespace ncclfi::harness
