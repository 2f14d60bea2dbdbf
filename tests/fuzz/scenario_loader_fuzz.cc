// libFuzzer target for the scenario loader: bytes -> scenario_from_text -> accepted or ScenarioError.
// Built only with -DNCCLFI_FUZZ=ON and clang (tests/fuzz/README.md).
#include <cstddef>
#include <cstdint>

#include "scenario_fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ncclfi::fuzz::check_scenario_input(data, size);
  return 0;
}
