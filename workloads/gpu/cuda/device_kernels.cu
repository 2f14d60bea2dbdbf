#include "device_kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <nccl.h>

namespace ncclfi::workload {
namespace {

template <typename T>
__device__ T from_int(int64_t v) {
  return static_cast<T>(v);
}
template <>
__device__ __half from_int<__half>(int64_t v) {
  return __float2half(static_cast<float>(v));
}
template <>
__device__ __nv_bfloat16 from_int<__nv_bfloat16>(int64_t v) {
  return __float2bfloat16(static_cast<float>(v));
}

template <typename T>
__device__ double to_double(T v) {
  return static_cast<double>(v);
}
template <>
__device__ double to_double<__half>(__half v) {
  return static_cast<double>(__half2float(v));
}
template <>
__device__ double to_double<__nv_bfloat16>(__nv_bfloat16 v) {
  return static_cast<double>(__bfloat162float(v));
}

template <typename T>
__global__ void fill_kernel(T* send, int rank, uint64_t count, uint64_t seq) {
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t j = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < count; j += stride) {
    send[j] = from_int<T>(input_value(rank, j, seq));
  }
}

template <typename T>
__global__ void verify_kernel(const T* recv, OpLayout layout, uint64_t seq, VerifyCounters* counters) {
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  unsigned long long wrong = 0, checked = 0, first = ~0ull;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < layout.recv_count;
       i += stride) {
    int64_t expected = 0;
    if (!expected_output(layout, i, seq, &expected)) continue;
    ++checked;
    // Exact: every expected value is a small integer, representable in every type; NaN never equals.
    if (!(to_double(recv[i]) == static_cast<double>(expected))) {
      if (wrong == 0) first = i;
      ++wrong;
    }
  }
  if (checked != 0) atomicAdd(&counters->checked, checked);
  if (wrong != 0) {
    atomicAdd(&counters->wrong, wrong);
    atomicMin(&counters->first_wrong, first);
  }
}

unsigned grid_for(uint64_t n) {
  const uint64_t blocks = (n + 255) / 256;
  return static_cast<unsigned>(blocks < 2048 ? (blocks == 0 ? 1 : blocks) : 2048);
}

template <typename T>
cudaError_t fill_as(void* send, int rank, uint64_t count, uint64_t seq, cudaStream_t stream) {
  fill_kernel<T><<<grid_for(count), 256, 0, stream>>>(static_cast<T*>(send), rank, count, seq);
  return cudaGetLastError();
}

template <typename T>
cudaError_t verify_as(const void* recv, const OpLayout& layout, uint64_t seq, VerifyCounters* counters,
                      cudaStream_t stream) {
  verify_kernel<T>
      <<<grid_for(layout.recv_count), 256, 0, stream>>>(static_cast<const T*>(recv), layout, seq, counters);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_fill(void* send, int dtype, int rank, uint64_t count, uint64_t seq, cudaStream_t stream) {
  switch (dtype) {
    case ncclInt8:
      return fill_as<int8_t>(send, rank, count, seq, stream);
    case ncclUint8:
      return fill_as<uint8_t>(send, rank, count, seq, stream);
    case ncclInt32:
      return fill_as<int32_t>(send, rank, count, seq, stream);
    case ncclInt64:
      return fill_as<int64_t>(send, rank, count, seq, stream);
    case ncclFloat16:
      return fill_as<__half>(send, rank, count, seq, stream);
    case ncclFloat32:
      return fill_as<float>(send, rank, count, seq, stream);
    case ncclFloat64:
      return fill_as<double>(send, rank, count, seq, stream);
    case ncclBfloat16:
      return fill_as<__nv_bfloat16>(send, rank, count, seq, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t launch_verify(const void* recv, int dtype, const OpLayout& layout, uint64_t seq,
                          VerifyCounters* counters, cudaStream_t stream) {
  switch (dtype) {
    case ncclInt8:
      return verify_as<int8_t>(recv, layout, seq, counters, stream);
    case ncclUint8:
      return verify_as<uint8_t>(recv, layout, seq, counters, stream);
    case ncclInt32:
      return verify_as<int32_t>(recv, layout, seq, counters, stream);
    case ncclInt64:
      return verify_as<int64_t>(recv, layout, seq, counters, stream);
    case ncclFloat16:
      return verify_as<__half>(recv, layout, seq, counters, stream);
    case ncclFloat32:
      return verify_as<float>(recv, layout, seq, counters, stream);
    case ncclFloat64:
      return verify_as<double>(recv, layout, seq, counters, stream);
    case ncclBfloat16:
      return verify_as<__nv_bfloat16>(recv, layout, seq, counters, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace ncclfi::workload
