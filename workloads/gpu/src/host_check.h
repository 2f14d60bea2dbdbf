// Host-side fill and verification: the same formulas the CUDA kernels apply, over host buffers.
// The unit tests use these to prove the formulas; the workload can use them to re-check a result.
#pragma once

#include <cstdint>

#include "dtype.h"
#include "expected_values.h"

namespace ncclfi::workload {

// Writes input_value(rank, j, seq) into the first `count` elements of `send`.
void fill_input_host(void* send, DType dtype, int rank, uint64_t count, uint64_t seq);

struct CheckResult {
  uint64_t wrong = 0;    // elements that differ from the expected value (NaN never matches)
  uint64_t checked = 0;  // elements the op defines on this rank
  uint64_t first_wrong = UINT64_MAX;
};

// Compares every element of `recv` (layout.recv_count of them) with expected_output().
CheckResult check_output_host(const void* recv, DType dtype, const OpLayout& layout, uint64_t seq);

}  // namespace ncclfi::workload
