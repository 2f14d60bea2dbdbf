// A data check found wrong results: the workload's own check, or nccl-tests' -c 1.
#include "mechanism_spec.h"
#include "ncclfi/workload_contract.h"

namespace ncclfi::harness {

extern const MechanismSpec kVerificationMechanism{
    .name = "verification",
    .noticed_by = "a data check found wrong results",
    .source = "the workload's check, or nccl-tests",
    .events = "`result_mismatch`; `done` with `\"verified\": false`",
    .exit_code = kExitVerification,
    .lines =
        {{"nccl_tests.out_of_bounds", R"(Out of bounds values : 0*[1-9]\d* FAILED)", "Out of bounds values",
          "nccl-tests' `Out of bounds values : <N> FAILED` with N > 0",
          R"(# Out of bounds values : 12 FAILED)", SignatureRole::kDetection, "",
          "# Out of bounds values : %d %s", "nccl-tests 2.x (`-c 1`)", "NVIDIA/nccl-tests src/common.cu", "",
          "results differed from the expected values", "degraded_link,gpu_fault", "every rank of nccl-tests"},
         // A result row: size count type redop root time algbw busbw #wrong [time algbw busbw #wrong].
         {"nccl_tests.wrong",
          R"(^\s*\d+\s+\d+\s+\w+\s+\w+\s+-?\d+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+(0*[1-9]\d*(\s|$)|\S+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+0*[1-9]\d*\s*$))",
          "", "a nccl-tests result row whose `#wrong` column (in-place or out-of-place) is not 0",
          R"(     1048576        262144     float     sum      -1    123.4    8.50    8.50      3    120.1    8.73    8.73      0)",
          SignatureRole::kDetection, "", "", "nccl-tests 2.x (`-c 1`)",
          "NVIDIA/nccl-tests src/common.cu (the #wrong columns)", "",
          "results differed from the expected values", "degraded_link,gpu_fault", "every rank of nccl-tests"},
         // ncclfi's own workloads check each result; the rank that prints it received the wrong data.
         {"workload.elements_wrong", R"(seq \d+: \d+ of \d+ elements wrong)", "elements wrong",
          "ncclfi's workloads' `... seq N: W of M elements wrong`",
          "ncclfi-cpu-ring: rank 1 allreduce seq 4: 2 of 65536 elements wrong", SignatureRole::kDetection, "",
          "rank %d allreduce seq %d: %llu of %zu elements wrong", "ncclfi 0.x",
          "workloads/cpu_ring/ring_modes.cc, workloads/gpu/cuda/step_runner.cc (check)", "",
          "a result differed from the expected values on the rank that received it", "degraded_link",
          "the failing rank (the receiver of the bad data)"}},
    .doc = "failure-signatures.md#4-nccl-tests",
};

}  // namespace ncclfi::harness
