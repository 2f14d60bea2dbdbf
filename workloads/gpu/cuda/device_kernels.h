// Fill and verify kernels: expected_values.h applied on the GPU, so a 1 GiB result is checked element
// by element without a copy to the host.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "expected_values.h"

namespace ncclfi::workload {

// Device-side verification counters of one step (cudaMemsetAsync them to {0, 0, UINT64_MAX} first).
struct VerifyCounters {
  unsigned long long wrong;
  unsigned long long checked;
  unsigned long long first_wrong;
};

// `dtype` is a DType value, which is its ncclDataType_t (dtype.h needs C++20 and stays out of the C++17
// CUDA translation unit, which switches on NCCL's own enumerators; nccl_session.cc checks they agree).
// Enqueues on `stream`: send[j] = input_value(rank, j, seq) for j < count.
cudaError_t launch_fill(void* send, int dtype, int rank, uint64_t count, uint64_t seq, cudaStream_t stream);
// Enqueues on `stream`: compares recv[0, layout.recv_count) with expected_output() and adds into `counters`.
cudaError_t launch_verify(const void* recv, int dtype, const OpLayout& layout, uint64_t seq,
                          VerifyCounters* counters, cudaStream_t stream);

}  // namespace ncclfi::workload
