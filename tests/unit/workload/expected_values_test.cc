// The expected-value formulas for every op and dtype, proved by simulating each collective on the host
// (what NCCL would compute) and checking the simulated buffers with the same code the GPU kernel runs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "dtype.h"
#include "host_check.h"
#include "op_spec.h"

namespace ncclfi::workload {
namespace {

struct SimResult {
  std::vector<std::vector<char>> recv;  // per rank
  std::vector<OpLayout> layouts;
};

// A reference implementation of each op over host buffers: independent of expected_output(), it moves
// and sums the filled inputs the way the NCCL semantics say.
SimResult simulate(OpKind op, DType dtype, uint64_t bytes, int nranks, uint64_t seq) {
  const size_t esize = dtype_size(dtype);
  std::vector<std::vector<char>> send(static_cast<size_t>(nranks));
  SimResult sim;
  for (int r = 0; r < nranks; ++r) {
    const OpLayout layout = make_layout(op, bytes, esize, r, nranks, seq);
    sim.layouts.push_back(layout);
    send[static_cast<size_t>(r)].resize(layout.send_count * esize);
    fill_input_host(send[static_cast<size_t>(r)].data(), dtype, r, layout.send_count, seq);
    sim.recv.emplace_back(layout.recv_count * esize, 0);
  }
  const auto get = [&](int r, uint64_t i) {
    return load_element(send[static_cast<size_t>(r)].data(), dtype, i);
  };
  const auto put = [&](int r, uint64_t i, double v) {
    store_element(sim.recv[static_cast<size_t>(r)].data(), dtype, i, static_cast<int64_t>(v));
  };
  for (int r = 0; r < nranks; ++r) {
    const OpLayout& l = sim.layouts[static_cast<size_t>(r)];
    const uint64_t c = l.chunk;
    for (uint64_t i = 0; i < l.recv_count; ++i) {
      double v = 0;
      switch (op) {
        case OpKind::kAllReduce:
          for (int s = 0; s < nranks; ++s) v += get(s, i);
          break;
        case OpKind::kReduce:
          if (r != l.root) continue;
          for (int s = 0; s < nranks; ++s) v += get(s, i);
          break;
        case OpKind::kReduceScatter:
          for (int s = 0; s < nranks; ++s) v += get(s, static_cast<uint64_t>(r) * c + i);
          break;
        case OpKind::kAllGather:
          v = get(static_cast<int>(i / c), i % c);
          break;
        case OpKind::kGather:
          if (r != l.root) continue;
          v = get(static_cast<int>(i / c), i % c);
          break;
        case OpKind::kBroadcast:
          v = get(l.root, i);
          break;
        case OpKind::kScatter:
          v = get(l.root, static_cast<uint64_t>(r) * c + i);
          break;
        case OpKind::kAllToAll:
          v = get(static_cast<int>(i / c), static_cast<uint64_t>(r) * c + i % c);
          break;
        case OpKind::kSendRecv:
          v = get((r + nranks - 1) % nranks, i);
          break;
      }
      put(r, i, v);
    }
  }
  return sim;
}

class EveryOpAndType : public ::testing::TestWithParam<std::tuple<OpKind, DType, int>> {};

TEST_P(EveryOpAndType, SimulatedResultVerifiesAndOneFlipIsCounted) {
  const auto [op, dtype, nranks] = GetParam();
  for (uint64_t seq : {0u, 1u, 7u}) {
    SimResult sim = simulate(op, dtype, 4096, nranks, seq);
    for (int r = 0; r < nranks; ++r) {
      const OpLayout& layout = sim.layouts[static_cast<size_t>(r)];
      const CheckResult ok = check_output_host(sim.recv[static_cast<size_t>(r)].data(), dtype, layout, seq);
      EXPECT_EQ(ok.wrong, 0u) << op_spec(op).name << " " << dtype_name(dtype) << " rank " << r;
      const bool defined = !((op == OpKind::kReduce || op == OpKind::kGather) && r != layout.root);
      EXPECT_EQ(ok.checked, defined ? layout.recv_count : 0u);
      if (!defined) continue;
      // Corrupt three elements: exactly three are counted, the first is reported.
      char* buffer = sim.recv[static_cast<size_t>(r)].data();
      for (uint64_t i : {uint64_t{3}, layout.recv_count / 2, layout.recv_count - 1}) {
        store_element(buffer, dtype, i, static_cast<int64_t>(load_element(buffer, dtype, i)) + 1);
      }
      const CheckResult bad = check_output_host(buffer, dtype, layout, seq);
      EXPECT_EQ(bad.wrong, 3u);
      EXPECT_EQ(bad.first_wrong, 3u);
      // The result of another step does not verify (a skipped op leaves a stale buffer).
      SimResult other = simulate(op, dtype, 4096, nranks, seq + 1);
      if (other.layouts[static_cast<size_t>(r)].root == layout.root) {
        EXPECT_GT(check_output_host(other.recv[static_cast<size_t>(r)].data(), dtype, layout, seq).wrong, 0u);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Workload, EveryOpAndType,
    ::testing::Combine(::testing::Values(OpKind::kAllReduce, OpKind::kAllGather, OpKind::kReduceScatter,
                                         OpKind::kReduce, OpKind::kBroadcast, OpKind::kAllToAll,
                                         OpKind::kSendRecv, OpKind::kGather, OpKind::kScatter),
                       ::testing::Values(DType::kFloat, DType::kDouble, DType::kHalf, DType::kBfloat16,
                                         DType::kInt8, DType::kUint8, DType::kInt32, DType::kInt64),
                       ::testing::Values(1, 2, 3, 8)),
    [](const auto& param_info) {
      return std::string(op_spec(std::get<0>(param_info.param)).name) + "_" +
             std::string(dtype_name(std::get<1>(param_info.param))) + "_" +
             std::to_string(std::get<2>(param_info.param));
    });

TEST(ExpectedValues, InputsAreSmallNonZeroIntegers) {
  for (int r = 0; r < 16; ++r) {
    for (uint64_t i = 0; i < 64; ++i) {
      const int64_t v = input_value(r, i, 3);
      EXPECT_GE(v, 1);
      EXPECT_LE(v, 8);
    }
  }
}

TEST(ExpectedValues, SumsStayExactUpToTheLimitOfEachType) {
  for (DType dtype : all_dtypes()) {
    const int n = std::min(max_exact_ranks(dtype), 64);
    std::vector<char> buffer(dtype_size(dtype));
    store_element(buffer.data(), dtype, 0, 8 * n);
    EXPECT_EQ(load_element(buffer.data(), dtype, 0), 8.0 * n) << dtype_name(dtype);
  }
}

TEST(ExpectedValues, NanNeverVerifies) {
  OpLayout layout = make_layout(OpKind::kAllReduce, 16, 4, 0, 2, 0);
  std::vector<float> recv(layout.recv_count);
  for (uint64_t i = 0; i < layout.recv_count; ++i) {
    recv[i] = static_cast<float>(sum_over_ranks(2, i, 0));
  }
  recv[1] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(check_output_host(recv.data(), DType::kFloat, layout, 0).wrong, 1u);
}

TEST(HalfConversions, KnownBitPatterns) {
  EXPECT_EQ(float_to_half_bits(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half_bits(3.0f), 0x4200);
  EXPECT_EQ(float_to_half_bits(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half_bits(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_half_bits(1e6f), 0x7c00);
  EXPECT_EQ(half_bits_to_float(0x4200), 3.0f);
  EXPECT_EQ(half_bits_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::isnan(half_bits_to_float(float_to_half_bits(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(float_to_bf16_bits(1.0f), 0x3f80);
  EXPECT_EQ(float_to_bf16_bits(3.0f), 0x4040);
  EXPECT_EQ(bf16_bits_to_float(0x4040), 3.0f);
  EXPECT_TRUE(std::isnan(bf16_bits_to_float(float_to_bf16_bits(std::numeric_limits<float>::quiet_NaN()))));
  for (int v = -2048; v <= 2048; ++v) {
    EXPECT_EQ(half_bits_to_float(float_to_half_bits(static_cast<float>(v))), static_cast<float>(v));
  }
  for (int v = -256; v <= 256; ++v) {
    EXPECT_EQ(bf16_bits_to_float(float_to_bf16_bits(static_cast<float>(v))), static_cast<float>(v));
  }
}

}  // namespace
}  // namespace ncclfi::workload
