// The launchers' own lines that are not a teardown (those are launcher_teardown's): torchrun restarting
// its worker group, Slurm reporting a task's end, Open MPI's and Slurm's summaries.
#include "signature_family.h"

namespace ncclfi::harness {

extern const SignatureFamily kLaunchersFamily{
    .name = "launchers",
    .title = "Launchers: restarts and task ends",
    .software = "torchrun (torch.distributed.elastic), Slurm's srun and slurmstepd, Open MPI's mpirun",
    .lines =
        {{.id = "torchrun.restart",
          .regex = R"(Worker group FAILED\. \d+/\d+ attempts left; will restart worker group)",
          .must_contain = "will restart",
          .shown = "torchrun's `Worker group FAILED. <N>/<M> attempts left; will restart worker group`",
          .example = "[default] Worker group FAILED. 3/3 attempts left; will restart worker group",
          .role = SignatureRole::kRestart,
          .format = "[%s] Worker group %s. %s/%s attempts left; will restart worker group",
          .versions = "PyTorch 1.9 to 2.11",
          .cited = "pytorch/pytorch torch/distributed/elastic/agent/server/api.py "
                   "(SimpleElasticAgent._invoke_run)",
          .meaning = "torchrun's agent saw a worker fail and restarts every worker of the group",
          .printed_by = "torchrun, on every node"},
         // Evidence only: without --kill-on-bad-exit srun tears nothing down, so the survivors' own
         // mechanisms are the detections.
         {.id = "srun.task_ended",
          .regex =
              R"(^srun: error: \S+: tasks? [\d,-]+: (Killed|Terminated|Exited with exit code \d+|.*[Ss]ignal))",
          .must_contain = "srun: error",
          .shown = "`srun: error: <node>: task <N>: Killed` (or `Exited with exit code <N>`, `Terminated`)",
          .example = "srun: error: node2: task 1: Killed",
          .role = SignatureRole::kEvidence,
          .implies = "srun_report",
          .format = "%s: task%s %s: %s",
          .versions = "Slurm 17 to 24",
          .cited = "Slurm's srun (its error() adds `srun: error: `), as this project's slurm tests see it",
          .meaning = "a task of the step ended: by a signal, or with a failing exit status",
          .site = "dead_rank",
          .printed_by = "srun, on the submitting node"},
         {.id = "slurm.step_cancelled",
          .regex =
              R"(\*\*\* (?:STEP|JOB) [\d.]+ (?:ON \S+ )?CANCELLED AT \S+(?: DUE TO (TIME LIMIT|PREEMPTION|NODE FAILURE))?)",
          .must_contain = "CANCELLED AT",
          .shown = "`slurmstepd: error: *** STEP <job>.<step> ON <node> CANCELLED AT <time> DUE TO TIME "
                   "LIMIT ***`",
          .example = "slurmstepd: error: *** STEP 4242.0 ON node2 CANCELLED AT 2026-12-02T10:00:00 DUE TO "
                     "TIME LIMIT ***",
          .role = SignatureRole::kEvidence,
          .implies = "slurm_cancel",
          .format = "*** %s ON %s CANCELLED AT %s DUE TO TIME LIMIT ***",
          .versions = "Slurm 17 to 24 (without `ON %s` in older releases; also `DUE TO PREEMPTION`, "
                      "`DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS`)",
          .cited = "SchedMD/slurm src/slurmd/slurmstepd/req.c",
          .meaning = "Slurm ended the step: its time limit (a hang that ran into the walltime), preemption, "
                     "or a failed node",
          .site = "host_hang,dead_rank,configuration",
          .printed_by = "slurmstepd, into the job's output"}},
};

}  // namespace ncclfi::harness
