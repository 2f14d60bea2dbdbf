#include <gtest/gtest.h>

#include "op_spec.h"

namespace ncclfi::workload {
namespace {

TEST(OpSpec, NamesAndAliasesParse) {
  for (const OpSpec& spec : all_ops()) {
    EXPECT_EQ(parse_op(spec.name), spec.kind);
    EXPECT_EQ(parse_op(spec.point), spec.kind);
    EXPECT_EQ(&op_spec(spec.kind), &spec);
  }
  EXPECT_EQ(parse_op("all-to-all"), OpKind::kAllToAll);
  EXPECT_EQ(parse_op("ring"), OpKind::kSendRecv);
  EXPECT_FALSE(parse_op("allreduceX").has_value());
  EXPECT_FALSE(parse_op("").has_value());
}

TEST(OpSpec, BusBandwidthFactorsMatchNcclTests) {
  EXPECT_DOUBLE_EQ(busbw_factor(OpKind::kAllReduce, 2), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(OpKind::kAllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(busbw_factor(OpKind::kAllGather, 8), 0.875);
  EXPECT_DOUBLE_EQ(busbw_factor(OpKind::kReduceScatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(busbw_factor(OpKind::kAllToAll, 2), 0.5);
  EXPECT_DOUBLE_EQ(busbw_factor(OpKind::kGather, 2), 0.5);
  EXPECT_DOUBLE_EQ(busbw_factor(OpKind::kScatter, 2), 0.5);
  EXPECT_DOUBLE_EQ(busbw_factor(OpKind::kReduce, 8), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(OpKind::kBroadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(OpKind::kSendRecv, 8), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(OpKind::kAllReduce, 1), 0.0);
}

TEST(OpSpec, BandwidthFromBytesAndTime) {
  // 1 GiB all_reduce in 10 ms on 2 ranks: algbw 107.37 GB/s, busbw the same (factor 1).
  const Bandwidth bw = compute_bandwidth(OpKind::kAllReduce, 1ull << 30, 0.010, 2);
  EXPECT_NEAR(bw.algbw_gbps, 107.374, 0.001);
  EXPECT_NEAR(bw.busbw_gbps, 107.374, 0.001);
  const Bandwidth ag = compute_bandwidth(OpKind::kAllGather, 1ull << 30, 0.010, 8);
  EXPECT_NEAR(ag.busbw_gbps, 107.374 * 0.875, 0.001);
  EXPECT_EQ(compute_bandwidth(OpKind::kAllReduce, 8, 0.0, 2).algbw_gbps, 0.0);
}

TEST(OpSpec, LayoutsSizeBuffersLikeNcclTests) {
  // all_gather of 1M floats over 4 ranks: 256K elements sent, 1M received, 1M bytes counted.
  OpLayout ag = make_layout(OpKind::kAllGather, 1u << 20, 4, 1, 4, 0);
  EXPECT_EQ(ag.chunk, 65536u);
  EXPECT_EQ(ag.send_count, 65536u);
  EXPECT_EQ(ag.recv_count, 262144u);
  EXPECT_EQ(op_bytes(ag, 4), 1u << 20);
  OpLayout rs = make_layout(OpKind::kReduceScatter, 1u << 20, 4, 1, 4, 0);
  EXPECT_EQ(rs.send_count, 262144u);
  EXPECT_EQ(rs.recv_count, 65536u);
  OpLayout a2a = make_layout(OpKind::kAllToAll, 1u << 20, 4, 1, 4, 0);
  EXPECT_EQ(a2a.send_count, 262144u);
  EXPECT_EQ(a2a.recv_count, 262144u);
  OpLayout ar = make_layout(OpKind::kAllReduce, 1u << 20, 2, 0, 2, 0);
  EXPECT_EQ(ar.recv_count, 524288u);
  EXPECT_EQ(op_bytes(ar, 2), 1u << 20);
  // 8 bytes of float over 4 ranks: still one element per rank.
  OpLayout tiny = make_layout(OpKind::kAllGather, 8, 4, 0, 4, 0);
  EXPECT_EQ(tiny.chunk, 1u);
  EXPECT_EQ(op_bytes(tiny, 4), 16u);
  // Roots rotate with the step; unrooted ops keep root 0.
  EXPECT_EQ(make_layout(OpKind::kBroadcast, 64, 4, 0, 3, 5).root, 2);
  EXPECT_EQ(make_layout(OpKind::kAllReduce, 64, 4, 0, 3, 5).root, 0);
  EXPECT_THROW(make_layout(OpKind::kAllReduce, 64, 4, 3, 3, 0), std::invalid_argument);
  EXPECT_THROW(make_layout(OpKind::kAllReduce, 64, 0, 0, 3, 0), std::invalid_argument);
}

}  // namespace
}  // namespace ncclfi::workload
