#include "host_check.h"

namespace ncclfi::workload {

void fill_input_host(void* send, DType dtype, int rank, uint64_t count, uint64_t seq) {
  for (uint64_t j = 0; j < count; ++j) store_element(send, dtype, j, input_value(rank, j, seq));
}

CheckResult check_output_host(const void* recv, DType dtype, const OpLayout& layout, uint64_t seq) {
  CheckResult result;
  for (uint64_t i = 0; i < layout.recv_count; ++i) {
    int64_t expected = 0;
    if (!expected_output(layout, i, seq, &expected)) continue;
    ++result.checked;
    // Every expected value is a small integer, exactly representable in every dtype: compare exactly.
    if (!(load_element(recv, dtype, i) == static_cast<double>(expected))) {
      if (result.wrong == 0) result.first_wrong = i;
      ++result.wrong;
    }
  }
  return result;
}

}  // namespace ncclfi::workload
