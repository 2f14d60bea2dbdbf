// nccl-tests' own -T timeout ended the test.
#include "mechanism_spec.h"

namespace ncclfi::harness {

extern const MechanismSpec kNcclTestsTimeoutMechanism{
    .name = "nccl_tests_timeout",
    .noticed_by = "nccl-tests' own `-T` timeout",
    .source = "nccl-tests",
    .lines = {{"nccl_tests.timeout", R"(: Test timeout \(\d+s\) )", "Test timeout",
               "`: Test timeout (<N>s) `", R"(gpu01: Test timeout (5s) common.cu:466)",
               SignatureRole::kDetection, "", "%s: Test timeout (%ds) %s:%d", "nccl-tests 2.x (`-T`)",
               "NVIDIA/nccl-tests src/common.cu", "", "a collective took longer than nccl-tests' -T",
               "host_hang,gpu_hang,congestion", "the rank that waited"}},
    .doc = "failure-signatures.md#4-nccl-tests",
};

}  // namespace ncclfi::harness
