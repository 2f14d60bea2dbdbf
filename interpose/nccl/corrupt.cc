#include "corrupt.h"

#include <cstring>

#include "cuda_driver.h"
#include "op_call.h"

namespace ncclfi::preload {
namespace {

constexpr size_t kMaxPitchBytes = size_t{1} << 30;

// Little-endian: the most significant byte of an element is its last.
void set_nan(unsigned char* e, ncclDataType_t datatype, size_t size) {
  switch (static_cast<int>(datatype)) {
    case ncclFloat32: {
      const uint32_t v = 0x7FC00000u;
      std::memcpy(e, &v, 4);
      return;
    }
    case ncclFloat64: {
      const uint64_t v = 0x7FF8000000000000ull;
      std::memcpy(e, &v, 8);
      return;
    }
    case ncclFloat16: {
      const uint16_t v = 0x7E00u;
      std::memcpy(e, &v, 2);
      return;
    }
    case 9: {  // bfloat16
      const uint16_t v = 0x7FC0u;
      std::memcpy(e, &v, 2);
      return;
    }
    case 10:
      e[0] = 0x7F;
      return;  // float8 e4m3 (fn): S.1111.111
    case 11:
      e[0] = 0x7E;
      return;  // float8 e5m2: S.11111.10
    default:
      std::memset(e, 0xFF, size);
      return;
  }
}

struct HostFlip {
  void* host;
  size_t n;
  ncclDataType_t datatype;
};

// Runs on a CUDA driver thread between the copy down and the copy back; must not call CUDA.
void CUDA_CB flip_on_host(void* user) {
  auto* job = static_cast<HostFlip*>(user);
  corrupt_host_elements(job->host, job->n, job->datatype, CorruptMode::kBitflip);
  delete job;
}

}  // namespace

CorruptionSpan plan_corruption(size_t elements, size_t element_size, size_t count, double draw) {
  CorruptionSpan span;
  if (elements == 0 || count == 0 || element_size == 0) return span;
  span.count = count < elements ? count : elements;
  span.stride = elements / span.count;
  const size_t max_stride = kMaxPitchBytes / element_size;
  if (span.stride > max_stride) span.stride = max_stride;
  if (draw < 0.0 || draw >= 1.0) draw = 0.0;
  span.first = static_cast<size_t>(draw * static_cast<double>(span.stride));
  if (span.first >= span.stride) span.first = span.stride - 1;
  return span;
}

void corrupt_host_elements(void* data, size_t n, ncclDataType_t datatype, CorruptMode mode) {
  const size_t size = datatype_size(datatype);
  if (size == 0) return;
  auto* bytes = static_cast<unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    unsigned char* e = bytes + i * size;
    switch (mode) {
      case CorruptMode::kBitflip:
        e[size - 1] ^= 0x40;
        break;  // bit 8*size-2
      case CorruptMode::kNan:
        set_nan(e, datatype, size);
        break;
      case CorruptMode::kZero:
        std::memset(e, 0, size);
        break;
    }
  }
}

std::string enqueue_corruption(void* recvbuff, ncclDataType_t datatype, const CorruptionSpan& span,
                               CorruptMode mode, cudaStream_t stream, int device) {
  if (span.count == 0) return "";
  const size_t size = datatype_size(datatype);
  if (size == 0) return "unknown datatype";
  std::string error;
  const CudaDriver* cu = cuda_driver(&error);
  if (cu == nullptr) return error;

  auto cu_stream = reinterpret_cast<CUstream>(stream);
  const StreamContext context(*cu, cu_stream, device);
  if (!context.error().empty()) return context.error();

  // Pinned staging for the chosen elements, packed. Not freed: the copies read it asynchronously and
  // a host function may not call CUDA; it is count*size bytes per injection.
  void* host = nullptr;
  const size_t bytes = span.count * size;
  CUresult rc = cu->mem_alloc_host(&host, bytes);
  const auto device_base = reinterpret_cast<CUdeviceptr>(recvbuff) + span.first * size;
  CUDA_MEMCPY2D up{};
  up.srcMemoryType = CU_MEMORYTYPE_HOST;
  up.srcHost = host;
  up.srcPitch = size;
  up.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  up.dstDevice = device_base;
  up.dstPitch = span.stride * size;
  up.WidthInBytes = size;
  up.Height = span.count;
  if (rc == CUDA_SUCCESS && mode == CorruptMode::kBitflip) {
    // Read-modify-write in stream order: copy the elements down, flip on the host, copy back.
    CUDA_MEMCPY2D down{};
    down.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    down.srcDevice = device_base;
    down.srcPitch = span.stride * size;
    down.dstMemoryType = CU_MEMORYTYPE_HOST;
    down.dstHost = host;
    down.dstPitch = size;
    down.WidthInBytes = size;
    down.Height = span.count;
    rc = cu->memcpy_2d_async(&down, cu_stream);
    if (rc == CUDA_SUCCESS) {
      auto* job = new HostFlip{host, span.count, datatype};
      rc = cu->launch_host_func(cu_stream, &flip_on_host, job);
      if (rc != CUDA_SUCCESS) delete job;
    }
  } else if (rc == CUDA_SUCCESS) {
    // nan and zero do not depend on the old values: prepare them now and copy up only.
    corrupt_host_elements(host, span.count, datatype, mode);
  }
  if (rc == CUDA_SUCCESS) rc = cu->memcpy_2d_async(&up, cu_stream);
  return rc == CUDA_SUCCESS ? "" : "CUDA driver error " + std::to_string(static_cast<int>(rc));
}

}  // namespace ncclfi::preload
