// The preload's pure parts: which elements corrupt picks and what it writes, NCCL codes, op sizes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "corrupt.h"
#include "ncclfi_interpose/nccl_result.h"
#include "op_call.h"

namespace ncclfi::preload {
namespace {

TEST(CorruptPlan, SpreadsCountElementsEvenly) {
  auto s = plan_corruption(100, 4, 4, 0.99);
  EXPECT_EQ(s.count, 4u);
  EXPECT_EQ(s.stride, 25u);
  EXPECT_EQ(s.first, 24u);
  EXPECT_LT(s.first + (s.count - 1) * s.stride, 100u);
  auto clamp = plan_corruption(2, 4, 10, 0.0);
  EXPECT_EQ(clamp.count, 2u);
  EXPECT_EQ(plan_corruption(0, 4, 1, 0.5).count, 0u);
  auto huge = plan_corruption(size_t{1} << 32, 4, 1, 0.0);
  EXPECT_LE(huge.stride * 4, size_t{1} << 30) << "one pitch stays below 1 GiB";
}

TEST(CorruptHost, BitflipFlipsTheTopExponentBit) {
  float v[2] = {1.0f, 2.0f};
  corrupt_host_elements(v, 2, ncclFloat32, CorruptMode::kBitflip);
  EXPECT_TRUE(std::isinf(v[0]));
  EXPECT_EQ(v[1], 0.0f);
  int32_t i = 5;
  corrupt_host_elements(&i, 1, ncclInt32, CorruptMode::kBitflip);
  EXPECT_EQ(i, 5 + (1 << 30));
}

TEST(CorruptHost, NanAndZeroPerType) {
  double d = 3.0;
  corrupt_host_elements(&d, 1, ncclFloat64, CorruptMode::kNan);
  EXPECT_TRUE(std::isnan(d));
  uint16_t h = 0x3c00;
  corrupt_host_elements(&h, 1, ncclFloat16, CorruptMode::kNan);
  EXPECT_EQ(h, 0x7E00);
  uint16_t bf = 0x3f80;
  corrupt_host_elements(&bf, 1, ncclBfloat16, CorruptMode::kNan);
  EXPECT_EQ(bf, 0x7FC0);
  int64_t n = 7;
  corrupt_host_elements(&n, 1, ncclInt64, CorruptMode::kNan);
  EXPECT_EQ(n, -1);
  float f = 9.0f;
  corrupt_host_elements(&f, 1, ncclFloat32, CorruptMode::kZero);
  EXPECT_EQ(f, 0.0f);
}

// The core's code table maps onto nccl.h's enum value for value (also a static_assert in
// ncclfi_interpose/nccl_result.h).
TEST(Codes, EveryCoreCodeIsNcclsOwnValue) {
  for (const auto& e : kNcclErrors) {
    EXPECT_EQ(static_cast<int>(to_nccl_result(e.code)), to_int(e.code)) << e.name;
    EXPECT_NE(to_nccl_result(e.code), ncclSuccess) << e.name;
    EXPECT_NE(to_nccl_result(e.code), ncclInProgress) << e.name;
  }
}

TEST(OpSizes, AsNcclTestsReportThem) {
  OpCall ag{OpKind::kAllGather, nullptr, nullptr, nullptr, 10, ncclFloat32, -1, -1};
  EXPECT_EQ(op_bytes(ag, 4), 160u);
  EXPECT_EQ(op_result_elements(ag, 0, 4), 40u);
  OpCall red{OpKind::kReduce, nullptr, nullptr, nullptr, 10, ncclFloat64, 1, -1};
  EXPECT_EQ(op_bytes(red, 4), 80u);
  EXPECT_EQ(op_result_elements(red, 0, 4), 0u);
  EXPECT_EQ(op_result_elements(red, 1, 4), 10u);
  OpCall send{OpKind::kSend, nullptr, nullptr, nullptr, 10, ncclInt8, -1, 2};
  EXPECT_EQ(op_result_elements(send, 0, 4), 0u);
  EXPECT_EQ(datatype_size(ncclBfloat16), 2u);
}

}  // namespace
}  // namespace ncclfi::preload
