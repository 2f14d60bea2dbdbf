// The preload forwards every wrapped function with its arguments bit-exact, is inert without a plan,
// exports only nccl* names, survives an NCCL that lacks a symbol, and does not count nested calls.
#include <cstdio>
#include <regex>

#include "preload_fixture.h"

namespace ncclfi::test {
namespace {

// The double's log against the driver's expectation; "k=*" in the expectation matches any value.
void expect_calls_match(const std::vector<std::string>& got, const std::vector<std::string>& want) {
  ASSERT_EQ(got.size(), want.size()) << "recorded " << got.size() << " calls, expected " << want.size();
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i].find("=*") == std::string::npos) {
      EXPECT_EQ(got[i], want[i]) << "call " << i;
      continue;
    }
    std::string pattern = std::regex_replace(want[i], std::regex(R"(=\*)"), "=\\S+");
    EXPECT_TRUE(std::regex_match(got[i], std::regex(pattern))) << got[i] << " vs " << want[i];
  }
}

TEST_F(PreloadTest, ForwardsEveryWrappedFunctionBitExactWithoutPreload) {
  // The baseline: driver and double agree with no preload at all.
  auto r = run({"forward-all", path("expect.txt")}, {}, /*preload=*/false);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  expect_calls_match(calls(), lines(path("expect.txt")));
}

TEST_F(PreloadTest, ForwardsEveryWrappedFunctionBitExactWhenInert) {
  auto r = run({"forward-all", path("expect.txt")});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  expect_calls_match(calls(), lines(path("expect.txt")));
  EXPECT_EQ(r.err, "");
}

TEST_F(PreloadTest, ForwardsEveryWrappedFunctionBitExactWhenActive) {
  // A plan whose fault never matches, plus the op trace: every call takes the slow path.
  write_plan(json::array({fault("never", "error", {{"code", 5}}, {{"ranks", {99}}}, json::object())}));
  auto r = run({"forward-all", path("expect.txt")}, {{"NCCLFI_TRACE_OPS", "1"}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  expect_calls_match(calls(), lines(path("expect.txt")));
  EXPECT_TRUE(events("inject").empty());
  // The slow path did run: every op was traced once (Bcast's nested Broadcast not counted).
  auto traced = events("op_enqueue");
  EXPECT_EQ(traced.size(), 12u);
}

std::string without_times(const std::string& out) {
  return std::regex_replace(out, std::regex(R"( ms=[0-9.]+)"), "");
}

// Stack and heap addresses move between runs (ASLR); the bit-exact tests above check them.
std::vector<std::string> without_addresses(const std::vector<std::string>& lines) {
  std::vector<std::string> out;
  for (const auto& l : lines) out.push_back(std::regex_replace(l, std::regex(R"(0x[0-9a-f]{8,})"), "ADDR"));
  return out;
}

TEST_F(PreloadTest, NoPlanMeansIdenticalBehaviourAndNoOutput) {
  auto plain = run({"ops", "allreduce", "5", "--rank", "1"}, {}, /*preload=*/false);
  auto plain_calls = calls();
  std::filesystem::remove(path("calls.log"));
  auto pre = run({"ops", "allreduce", "5", "--rank", "1"});
  EXPECT_EQ(pre.exit_code, plain.exit_code);
  EXPECT_EQ(pre.term_signal, plain.term_signal);
  EXPECT_EQ(without_times(pre.out), without_times(plain.out));
  EXPECT_EQ(pre.err, plain.err);
  EXPECT_EQ(pre.err, "");
  EXPECT_EQ(without_addresses(calls()), without_addresses(plain_calls));
  EXPECT_EQ(calls().size(), 13u);
  EXPECT_FALSE(std::filesystem::exists(path("events.jsonl"))) << "the inert preload wrote events";
}

TEST_F(PreloadTest, ExportsOnlyNcclNamesGetenvAndConnect) {
  std::string cmd = std::string("nm -D --defined-only ") + NCCLFI_TEST_PRELOAD;
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::vector<std::string> names;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p) != nullptr) {
    std::string line(buf);
    auto pos = line.find_last_of(' ');
    names.push_back(line.substr(pos + 1, line.size() - pos - 2));
  }
  pclose(p);
  ASSERT_FALSE(names.empty());
  // NCCL's names, getenv/secure_getenv (what libnccl reads of the environment: env_reads.h) and connect
  // (the bootstrap's connections: bootstrap_connect.h).
  for (const auto& n : names) {
    EXPECT_TRUE(n.rfind("nccl", 0) == 0 || n == "getenv" || n == "secure_getenv" || n == "connect")
        << n << " is exported";
  }
  for (const char* want :
       {"ncclAllReduce", "ncclBcast", "ncclCommInitAll", "ncclCommGetAsyncError", "ncclGroupEnd",
        "ncclCommShrink", "ncclMemAlloc", "ncclCommWindowRegister", "getenv", "secure_getenv", "connect"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  }
}

TEST_F(PreloadTest, OlderNcclWithoutASymbolStillWorks) {
  // The "old" double lacks ncclCommShrink: the driver still loads (the preload provides the name),
  // other calls forward, and the missing one answers ncclInvalidUsage (5) instead of crashing.
  auto r = run({"old-nccl"}, {{"LD_LIBRARY_PATH", NCCLFI_TEST_OLD_DOUBLE_DIR}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(has_line(r.out, "allreduce rc=0")) << r.out;
  EXPECT_TRUE(has_line(r.out, "shrink rc=5")) << r.out;
  EXPECT_EQ(calls_named("ncclAllReduce").size(), 1u);
}

TEST_F(PreloadTest, OpTraceGivesSequenceKindAndBytesPerComm) {
  auto r = run({"ops", "allgather", "4", "--rank", "1", "--nranks", "4", "--count", "10"},
               {{"NCCLFI_TRACE_OPS", "1"}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto traced = events("op_enqueue");
  ASSERT_EQ(traced.size(), 4u);
  for (size_t i = 0; i < traced.size(); ++i) {
    EXPECT_EQ(traced[i]["seq"], i + 1);
    EXPECT_EQ(traced[i]["op"], "allgather");
    EXPECT_EQ(traced[i]["bytes"], 10 * 4 * 4);  // count * nranks * sizeof(float)
    EXPECT_EQ(traced[i]["comm"], 0);
    EXPECT_EQ(traced[i]["rank"], 1);
    EXPECT_EQ(traced[i]["source"], "preload");
  }
  EXPECT_EQ(r.err, "");
}

TEST_F(PreloadTest, TraceIsOffByDefault) {
  write_plan(json::array({fault("never", "error", {{"code", 5}}, {{"ranks", {99}}}, json::object())}));
  auto r = run({"ops", "allreduce", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(events("op_enqueue").empty());
}

TEST_F(PreloadTest, NestedBcastIsCountedOnce) {
  // ncclBcast calls ncclBroadcast through the PLT: one broadcast op per Bcast, and a fault on the
  // 2nd broadcast fires on the 2nd Bcast, not on the 1st Bcast's inner call.
  write_plan(json::array({fault("e", "error", {{"code", "ncclInvalidArgument"}}, {{"ops", {"broadcast"}}},
                                {{"after_calls", 2}})}));
  auto r = run({"ops", "bcast", "3"}, {{"NCCLFI_TRACE_OPS", "1"}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto o = outcomes(r.out);
  EXPECT_EQ(o[1].rc, 0);
  EXPECT_EQ(o[2].rc, 4);
  EXPECT_EQ(o[3].rc, 0);
  auto traced = events("op_enqueue");
  ASSERT_EQ(traced.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(traced[i]["seq"], i + 1);
  EXPECT_EQ(calls_named("ncclBcast").size(), 2u);
  EXPECT_EQ(calls_named("ncclBroadcast").size(), 2u);
  auto inj = events("inject");
  ASSERT_EQ(inj.size(), 1u);
  EXPECT_EQ(inj[0]["seq"], 2);
}

TEST_F(PreloadTest, ForwardsToAnNcclInALocalScope) {
  // PyTorch's pattern: NCCL reached only through a library dlopen'ed RTLD_LOCAL. RTLD_NEXT cannot
  // see it; the preload must still forward (not answer ncclInvalidUsage) and still see the ops.
  std::map<std::string, std::string> env = {{"NCCL_DOUBLE_LOG", path("calls.log")},
                                            {"NCCLFI_EVENTS", path("events.jsonl")},
                                            {"NCCLFI_TRACE_OPS", "1"},
                                            {"LD_PRELOAD", NCCLFI_TEST_PRELOAD}};
  auto r = run_process({NCCLFI_TEST_LOCAL_SCOPE_DRIVER, NCCLFI_TEST_FAKE_TORCH, "3"}, env, 20);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(has_line(r.out, "init rc=0")) << r.out;
  for (int i = 1; i <= 3; ++i) EXPECT_TRUE(has_line(r.out, "call " + std::to_string(i) + " rc=0")) << r.out;
  EXPECT_EQ(calls_named("ncclAllReduce").size(), 3u);
  auto traced = events("op_enqueue");
  ASSERT_EQ(traced.size(), 3u) << "the preload did not see the ops";
  EXPECT_EQ(traced[2]["rank"], 1);
}

}  // namespace
}  // namespace ncclfi::test
