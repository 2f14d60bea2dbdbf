// `corrupt` alters exactly `count` elements of the op's receive buffer, after the op, on the op's
// stream, as its mode says. On CPU the CUDA driver is a host-memory stand-in (double/cuda_double.cc)
// and the NCCL double writes a known pattern as the op's "result" (NCCL_DOUBLE_FILL=1).
#include <cmath>
#include <cstring>

#include "ncclfi/effects.h"
#include "preload_fixture.h"

namespace ncclfi::test {
namespace {

constexpr size_t kCount = 64;  // float32 elements of the allreduce

unsigned char pattern(size_t j) {
  return static_cast<unsigned char>(j * 31 + 7);
}

struct CorruptCase {
  const char* mode;
  bool group;
};

void PrintTo(const CorruptCase& c, std::ostream* os) {
  *os << c.mode << (c.group ? " in a group" : "");
}

class CorruptTest : public PreloadTest, public ::testing::WithParamInterface<CorruptCase> {};

TEST_P(CorruptTest, AltersExactlyCountElementsAfterTheOp) {
  const CorruptCase& c = GetParam();
  write_plan(json::array({fault("c", "corrupt", {{"mode", c.mode}, {"count", 3}}, {{"ops", {"allreduce"}}},
                                {{"after_calls", 2}})}));
  std::vector<std::string> args = {"ops",    "allreduce",     "2", "--count", std::to_string(kCount),
                                   "--dump", path("recv.bin")};
  if (c.group) args.push_back("--group");
  auto r = run(args, {{"NCCL_DOUBLE_FILL", "1"}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.err, "");

  auto inj = events("inject");
  ASSERT_EQ(inj.size(), 1u);
  EXPECT_EQ(inj[0]["mode"], c.mode);
  EXPECT_EQ(inj[0]["elements"], 3);
  EXPECT_EQ(inj[0]["stride"], kCount / 3);
  const size_t first = inj[0]["first"].get<size_t>();
  const size_t stride = inj[0]["stride"].get<size_t>();
  if (c.group) {
    EXPECT_EQ(inj[0]["deferred"], "group_end");
  }

  std::vector<unsigned char> buf(kCount * 4);
  std::ifstream(path("recv.bin"), std::ios::binary)
      .read(reinterpret_cast<char*>(buf.data()), static_cast<std::streamsize>(buf.size()));
  std::vector<size_t> changed;
  for (size_t e = 0; e < kCount; ++e) {
    unsigned char want[4];
    for (size_t b = 0; b < 4; ++b) want[b] = pattern(e * 4 + b);
    if (std::memcmp(want, &buf[e * 4], 4) == 0) continue;
    changed.push_back(e);
    float got;
    std::memcpy(&got, &buf[e * 4], 4);
    if (std::string(c.mode) == "nan") {
      EXPECT_TRUE(std::isnan(got)) << "element " << e;
    } else if (std::string(c.mode) == "zero") {
      EXPECT_EQ(got, 0.0f) << "element " << e;
    } else {
      want[3] ^= 0x40;  // bit 30: the top exponent bit of a float
      EXPECT_EQ(std::memcmp(want, &buf[e * 4], 4), 0) << "element " << e;
    }
  }
  ASSERT_EQ(changed.size(), 3u) << "a corruption before the op would have been overwritten by it";
  for (size_t k = 0; k < 3; ++k) EXPECT_EQ(changed[k], first + k * stride);

  // Stream order: the alteration is enqueued after NCCL had the op (after the group's end).
  auto log = calls();
  size_t last_nccl = 0, first_copy = log.size();
  for (size_t i = 0; i < log.size(); ++i) {
    const std::string& l = log[i];
    if (l.rfind(c.group ? "ncclGroupEnd" : "ncclAllReduce", 0) == 0) last_nccl = i;
    if (l.rfind("cuMemcpy2DAsync", 0) == 0 && first_copy == log.size()) first_copy = i;
    if (l.rfind("cu", 0) == 0) {
      EXPECT_NE(l.find("stream=0x5151"), std::string::npos) << l;
    }
  }
  EXPECT_LT(last_nccl, first_copy);
}

INSTANTIATE_TEST_SUITE_P(Modes, CorruptTest,
                         ::testing::Values(CorruptCase{"bitflip", false}, CorruptCase{"nan", false},
                                           CorruptCase{"zero", false}, CorruptCase{"bitflip", true},
                                           CorruptCase{"nan", true}),
                         [](const ::testing::TestParamInfo<CorruptCase>& p) {
                           return std::string(p.param.mode) + (p.param.group ? "InGroup" : "");
                         });

// Same seed, same bits: the elements a corrupt alters are chosen from the corruption seed every layer draws
// (corrupt_seed: the fault's own seed, its id, the firing), the seed the shim flips its bits with.
TEST_F(PreloadTest, CorruptChoosesItsElementsFromTheSharedCorruptionSeed) {
  write_plan(json::array({fault("c", "corrupt", {{"mode", "zero"}, {"count", 3}, {"seed", 5}},
                                {{"ops", {"allreduce"}}}, {{"count", 3}})}));
  auto r = run({"ops", "allreduce", "3", "--count", std::to_string(kCount)}, {{"NCCL_DOUBLE_FILL", "1"}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto inj = events("inject");
  ASSERT_EQ(inj.size(), 3u);
  for (const json& e : inj) {
    const auto firing = e["firing"].get<uint64_t>();
    const size_t stride = kCount / 3;
    const double draw = corrupt_draw(corrupt_seed(5, 7, "c", firing));
    EXPECT_EQ(e["stride"], stride);
    EXPECT_EQ(e["first"], static_cast<size_t>(draw * static_cast<double>(stride))) << firing;
  }
}

TEST_F(PreloadTest, CorruptOnRecvAltersItsBuffer) {
  write_plan(json::array(
      {fault("c", "corrupt", {{"mode", "zero"}}, {{"ops", {"recv"}}, {"ranks", {0}}}, json::object())}));
  auto r = run({"ops", "recv", "1", "--dump", path("recv.bin")}, {{"NCCL_DOUBLE_FILL", "1"}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto inj = events("inject");
  ASSERT_EQ(inj.size(), 1u);
  EXPECT_EQ(inj[0]["elements"], 1);
  EXPECT_EQ(inj[0]["direction"], "recv");
}

TEST_F(PreloadTest, CorruptOnANonBlockingCommWaitsUntilTheOpIsEnqueued) {
  // The op answers ncclInProgress and the double "launches" it only when ncclCommGetAsyncError
  // answers ncclSuccess: the corruption must come after that, or the fill would overwrite it.
  write_plan(json::array({fault("c", "corrupt", {{"mode", "zero"}, {"count", 2}},
                                {{"ops", {"allreduce"}}, {"ranks", {1}}}, {{"after_calls", 2}})}));
  auto r = run({"ops", "allreduce", "2", "--nonblocking", "--rank", "1", "--count", std::to_string(kCount),
                "--dump", path("recv.bin")},
               {{"NCCL_DOUBLE_FILL", "1"}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto o = outcomes(r.out);
  EXPECT_EQ(o[2].rc, 7) << "ncclInProgress passes through";
  auto inj = events("inject");
  ASSERT_EQ(inj.size(), 1u);
  EXPECT_EQ(inj[0]["deferred"], "nonblocking");
  EXPECT_EQ(inj[0]["rank"], 1);
  // The preload asks NCCL about the communicator (rank, size, device) only when no operation is in
  // flight: NCCL refuses and WARNs otherwise, once per poll of the job's wait loop.
  for (const auto& line : calls())
    EXPECT_EQ(line.find("Attempt to use communicator"), std::string::npos) << line;
  std::vector<unsigned char> buf(kCount * 4);
  std::ifstream(path("recv.bin"), std::ios::binary)
      .read(reinterpret_cast<char*>(buf.data()), static_cast<std::streamsize>(buf.size()));
  size_t zeroed = 0, other = 0;
  for (size_t e = 0; e < kCount; ++e) {
    bool same = true;
    for (size_t b = 0; b < 4; ++b) same = same && buf[e * 4 + b] == pattern(e * 4 + b);
    float v;
    std::memcpy(&v, &buf[e * 4], 4);
    if (!same) (v == 0.0f ? zeroed : other)++;
  }
  EXPECT_EQ(zeroed, 2u);
  EXPECT_EQ(other, 0u);
}

}  // namespace
}  // namespace ncclfi::test
