// nccl-tests' own -T timeout ended the test.
#include "mechanism_spec.h"

namespace ncclfi::harness {

extern const MechanismSpec kNcclTestsTimeoutMechanism{
    .name = "nccl_tests_timeout",
    .noticed_by = "nccl-tests' own `-T` timeout",
    .source = "nccl-tests",
    .lines = {{"nccl_tests.timeout", R"(: Test timeout \(\d+s\) )", "Test timeout",
               "`: Test timeout (<N>s) `", R"(gpu01: Test timeout (5s) common.cu:466)"}},
    .doc = "failure-signatures.md#4-nccl-tests",
};

}  // namespace ncclfi::harness
