// libFuzzer target for the fault plan parser: bytes -> JSON -> parse_plan -> to_json round trip.
// Built only with -DNCCLFI_FUZZ=ON and clang; README.md has the run record.
#include <cstddef>
#include <cstdint>

#include "plan_fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ncclfi::fuzz::check_plan_input(data, size);
  return 0;
}
