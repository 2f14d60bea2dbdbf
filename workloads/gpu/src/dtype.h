// The element types the workload exercises, their sizes and names, and exact host conversions for
// the 16-bit floating types (the device uses cuda_fp16.h / cuda_bf16.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace ncclfi::workload {

// Values match ncclDataType_t so the CUDA side converts with a cast.
enum class DType : int {
  kInt8 = 0,
  kUint8 = 1,
  kInt32 = 2,
  kInt64 = 4,
  kHalf = 6,
  kFloat = 7,
  kDouble = 8,
  kBfloat16 = 9,
};

std::span<const DType> all_dtypes();
std::string_view dtype_name(DType dtype);
size_t dtype_size(DType dtype);
// Accepts the names above plus common aliases (float32, fp32, fp16, bf16, int, ...).
std::optional<DType> parse_dtype(std::string_view name);
// The largest world size for which the sum of inputs (8 per rank at most) is exact in this type.
int max_exact_ranks(DType dtype);

// IEEE binary16 and bfloat16 conversions, round to nearest even (exact for the small integers we use).
uint16_t float_to_half_bits(float value);
float half_bits_to_float(uint16_t bits);
uint16_t float_to_bf16_bits(float value);
float bf16_bits_to_float(uint16_t bits);

// Reads element `index` of a buffer of `dtype` as a double / writes an integer value into it.
double load_element(const void* buffer, DType dtype, uint64_t index);
void store_element(void* buffer, DType dtype, uint64_t index, int64_t value);

}  // namespace ncclfi::workload
