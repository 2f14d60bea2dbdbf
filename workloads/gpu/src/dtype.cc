#include "dtype.h"

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace ncclfi::workload {
namespace {

constexpr std::array<DType, 8> kAll = {DType::kFloat, DType::kDouble, DType::kHalf,  DType::kBfloat16,
                                       DType::kInt8,  DType::kUint8,  DType::kInt32, DType::kInt64};

template <typename T>
T read_as(const void* buffer, uint64_t index) {
  T value;
  std::memcpy(&value, static_cast<const char*>(buffer) + index * sizeof(T), sizeof(T));
  return value;
}

template <typename T>
void write_as(void* buffer, uint64_t index, T value) {
  std::memcpy(static_cast<char*>(buffer) + index * sizeof(T), &value, sizeof(T));
}

}  // namespace

std::span<const DType> all_dtypes() {
  return kAll;
}

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kInt8:
      return "int8";
    case DType::kUint8:
      return "uint8";
    case DType::kInt32:
      return "int32";
    case DType::kInt64:
      return "int64";
    case DType::kHalf:
      return "half";
    case DType::kFloat:
      return "float";
    case DType::kDouble:
      return "double";
    case DType::kBfloat16:
      return "bfloat16";
  }
  return "?";
}

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kInt8:
    case DType::kUint8:
      return 1;
    case DType::kHalf:
    case DType::kBfloat16:
      return 2;
    case DType::kInt32:
    case DType::kFloat:
      return 4;
    case DType::kInt64:
    case DType::kDouble:
      return 8;
  }
  return 0;
}

std::optional<DType> parse_dtype(std::string_view name) {
  struct Alias {
    std::string_view name;
    DType dtype;
  };
  static constexpr Alias kAliases[] = {
      {"float", DType::kFloat},       {"float32", DType::kFloat},  {"fp32", DType::kFloat},
      {"double", DType::kDouble},     {"float64", DType::kDouble}, {"fp64", DType::kDouble},
      {"half", DType::kHalf},         {"float16", DType::kHalf},   {"fp16", DType::kHalf},
      {"bfloat16", DType::kBfloat16}, {"bf16", DType::kBfloat16},  {"int8", DType::kInt8},
      {"uint8", DType::kUint8},       {"int32", DType::kInt32},    {"int", DType::kInt32},
      {"int64", DType::kInt64},
  };
  for (const Alias& alias : kAliases) {
    if (alias.name == name) return alias.dtype;
  }
  return std::nullopt;
}

int max_exact_ranks(DType dtype) {
  switch (dtype) {
    case DType::kInt8:
      return 15;  // 8 * 15 = 120 <= 127
    case DType::kUint8:
      return 31;  // 8 * 31 = 248 <= 255
    case DType::kBfloat16:
      return 32;  // integers exact up to 256
    case DType::kHalf:
      return 256;  // integers exact up to 2048
    default:
      return 1 << 20;
  }
}

uint16_t float_to_half_bits(float value) {
  const uint32_t f = std::bit_cast<uint32_t>(value);
  const uint32_t sign = (f >> 16) & 0x8000u;
  const int32_t exponent = static_cast<int32_t>((f >> 23) & 0xffu);
  uint32_t mantissa = f & 0x7fffffu;
  if (exponent == 0xff) {  // inf or NaN
    return static_cast<uint16_t>(sign | 0x7c00u | (mantissa != 0 ? 0x200u : 0u));
  }
  int32_t half_exp = exponent - 127 + 15;
  if (half_exp >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow to inf
  if (half_exp <= 0) {                                                 // subnormal or zero
    if (half_exp < -10) return static_cast<uint16_t>(sign);
    mantissa |= 0x800000u;
    const uint32_t shift = static_cast<uint32_t>(14 - half_exp);
    uint32_t half_mant = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1u);
    const uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half_mant & 1u))) ++half_mant;
    return static_cast<uint16_t>(sign | half_mant);
  }
  uint32_t bits = sign | (static_cast<uint32_t>(half_exp) << 10) | (mantissa >> 13);
  const uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (bits & 1u))) ++bits;  // may carry into the exponent: correct
  return static_cast<uint16_t>(bits);
}

float half_bits_to_float(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1fu;
  const uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0) {
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign != 0 ? -magnitude : magnitude;
  }
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent - 15 + 127) << 23) | (mantissa << 13));
}

uint16_t float_to_bf16_bits(float value) {
  const uint32_t f = std::bit_cast<uint32_t>(value);
  if ((f & 0x7f800000u) == 0x7f800000u && (f & 0x7fffffu) != 0) {
    return static_cast<uint16_t>((f >> 16) | 0x40u);  // keep NaN a NaN
  }
  const uint32_t rounding = 0x7fffu + ((f >> 16) & 1u);
  return static_cast<uint16_t>((f + rounding) >> 16);
}

float bf16_bits_to_float(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

double load_element(const void* buffer, DType dtype, uint64_t index) {
  switch (dtype) {
    case DType::kInt8:
      return read_as<int8_t>(buffer, index);
    case DType::kUint8:
      return read_as<uint8_t>(buffer, index);
    case DType::kInt32:
      return read_as<int32_t>(buffer, index);
    case DType::kInt64:
      return static_cast<double>(read_as<int64_t>(buffer, index));
    case DType::kHalf:
      return half_bits_to_float(read_as<uint16_t>(buffer, index));
    case DType::kFloat:
      return read_as<float>(buffer, index);
    case DType::kDouble:
      return read_as<double>(buffer, index);
    case DType::kBfloat16:
      return bf16_bits_to_float(read_as<uint16_t>(buffer, index));
  }
  throw std::logic_error("load_element: unknown dtype");
}

void store_element(void* buffer, DType dtype, uint64_t index, int64_t value) {
  switch (dtype) {
    case DType::kInt8:
      write_as(buffer, index, static_cast<int8_t>(value));
      return;
    case DType::kUint8:
      write_as(buffer, index, static_cast<uint8_t>(value));
      return;
    case DType::kInt32:
      write_as(buffer, index, static_cast<int32_t>(value));
      return;
    case DType::kInt64:
      write_as(buffer, index, value);
      return;
    case DType::kHalf:
      write_as(buffer, index, float_to_half_bits(static_cast<float>(value)));
      return;
    case DType::kFloat:
      write_as(buffer, index, static_cast<float>(value));
      return;
    case DType::kDouble:
      write_as(buffer, index, static_cast<double>(value));
      return;
    case DType::kBfloat16:
      write_as(buffer, index, float_to_bf16_bits(static_cast<float>(value)));
      return;
  }
  throw std::logic_error("store_element: unknown dtype");
}

}  // namespace ncclfi::workload
