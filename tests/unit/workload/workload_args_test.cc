#include <gtest/gtest.h>

#include <vector>

#include "workload_args.h"

namespace ncclfi::workload {
namespace {

WorkloadArgs parse(std::vector<const char*> argv) {
  argv.insert(argv.begin(), "ncclfi-workload");
  WorkloadArgs args;
  std::string help;
  EXPECT_TRUE(parse_workload_args(static_cast<int>(argv.size()), argv.data(), args, help));
  return args;
}

std::string usage_error(std::vector<const char*> argv) {
  argv.insert(argv.begin(), "ncclfi-workload");
  WorkloadArgs args;
  std::string help;
  try {
    parse_workload_args(static_cast<int>(argv.size()), argv.data(), args, help);
  } catch (const UsageError& error) {
    return error.what();
  }
  return "";
}

TEST(ByteSize, Suffixes) {
  EXPECT_EQ(parse_byte_size("8"), 8u);
  EXPECT_EQ(parse_byte_size("64K"), 65536u);
  EXPECT_EQ(parse_byte_size("1M"), 1048576u);
  EXPECT_EQ(parse_byte_size("1G"), 1073741824u);
  EXPECT_EQ(parse_byte_size("2gib"), 2147483648u);
  EXPECT_EQ(parse_byte_size("16MB"), 16777216u);
  EXPECT_THROW(parse_byte_size(""), UsageError);
  EXPECT_THROW(parse_byte_size("M"), UsageError);
  EXPECT_THROW(parse_byte_size("0"), UsageError);
  EXPECT_THROW(parse_byte_size("1X"), UsageError);
  EXPECT_THROW(parse_byte_size("-1"), UsageError);
  EXPECT_THROW(parse_byte_size("99999999999999999999"), UsageError);
  EXPECT_THROW(parse_byte_size("17T"), UsageError);
  EXPECT_EQ(format_byte_size(1u << 20), "1M");
  EXPECT_EQ(format_byte_size(1000), "1000");
}

TEST(WorkloadArgs, DefaultsAreAShortAllReduce) {
  const WorkloadArgs args = parse({});
  ASSERT_EQ(args.ops.size(), 1u);
  EXPECT_EQ(args.ops[0], OpKind::kAllReduce);
  EXPECT_EQ(args.dtypes[0], DType::kFloat);
  EXPECT_EQ(args.sizes[0], 1u << 20);
  EXPECT_TRUE(args.watchdog);
  EXPECT_FALSE(args.check);
  const RunPlan plan = make_run_plan(args);
  EXPECT_EQ(plan.total_steps(), 25u);
}

TEST(WorkloadArgs, ListsAndFlags) {
  const WorkloadArgs args =
      parse({"--op", "all_reduce,all-to-all", "--dtype", "half,bf16", "--bytes", "8,1M,1G", "--iters", "7",
             "--warmup", "2", "--check", "--nonblocking", "--no-watchdog", "--timeout-s", "2.5",
             "--checkpoint", "/tmp/x", "--checkpoint-every", "10"});
  EXPECT_EQ(args.ops, (std::vector<OpKind>{OpKind::kAllReduce, OpKind::kAllToAll}));
  EXPECT_EQ(args.dtypes, (std::vector<DType>{DType::kHalf, DType::kBfloat16}));
  EXPECT_EQ(args.sizes, (std::vector<uint64_t>{8, 1u << 20, 1u << 30}));
  EXPECT_TRUE(args.check);
  EXPECT_TRUE(args.nonblocking);
  EXPECT_FALSE(args.watchdog);
  EXPECT_DOUBLE_EQ(args.timeout_s, 2.5);
  EXPECT_EQ(args.checkpoint_dir, "/tmp/x");
  EXPECT_EQ(args.checkpoint_every, 10u);
  const RunPlan plan = make_run_plan(args);
  ASSERT_EQ(plan.cases.size(), 12u);
  EXPECT_EQ(plan.steps_per_case, 9u);
  EXPECT_EQ(plan.total_steps(), 108u);
  EXPECT_EQ(plan.case_of(17), 1u);
  EXPECT_EQ(plan.index_in_case(17), 8u);
  EXPECT_EQ(plan.cases[1].bytes, 1u << 20);
  EXPECT_EQ(plan.cases[3].dtype, DType::kBfloat16);
  EXPECT_EQ(plan.cases[6].op, OpKind::kAllToAll);
}

TEST(WorkloadArgs, AllExpandsToEveryOpAndType) {
  const WorkloadArgs args = parse({"--op", "all", "--dtype", "all"});
  EXPECT_EQ(args.ops.size(), 9u);
  EXPECT_EQ(args.dtypes.size(), 8u);
}

TEST(WorkloadArgs, ErrorsNameTheProblem) {
  EXPECT_NE(usage_error({"--op", "allreduse"}).find("unknown operation 'allreduse'"), std::string::npos);
  EXPECT_NE(usage_error({"--dtype", "float128"}).find("unknown type 'float128'"), std::string::npos);
  EXPECT_NE(usage_error({"--bytes", "1Q"}).find("unknown suffix"), std::string::npos);
  EXPECT_NE(usage_error({"--bytes", "8,,16"}).find("empty item"), std::string::npos);
  EXPECT_NE(usage_error({"--iters", "0"}).find("--iters"), std::string::npos);
  EXPECT_NE(usage_error({"--iters", "ten"}).find("iters"), std::string::npos);
  EXPECT_NE(usage_error({"--timeout-s", "0"}).find("--timeout-s"), std::string::npos);
  EXPECT_NE(usage_error({"--checkpoint-every", "0"}).find("--checkpoint-every"), std::string::npos);
  EXPECT_NE(usage_error({"--window", "0"}).find("--window"), std::string::npos);
  EXPECT_FALSE(usage_error({"--frobnicate"}).empty());
  EXPECT_FALSE(usage_error({"stray"}).empty());
}

TEST(WorkloadArgs, RecoverShrinkImpliesNonBlockingAndRefusesWhatCannotBe) {
  const WorkloadArgs args = parse({"--recover", "shrink", "--recover-wait-s", "3"});
  EXPECT_EQ(args.recover, "shrink");
  EXPECT_TRUE(args.nonblocking);  // a blocking communicator would hold the failed step's call forever
  EXPECT_DOUBLE_EQ(args.recover_wait_s, 3);
  EXPECT_FALSE(parse({}).nonblocking);
  EXPECT_EQ(usage_error({"--recover", "grow"}), "--recover: unknown mode 'grow' (known: shrink)");
  EXPECT_EQ(usage_error({"--recover", "shrink", "--recover-wait-s", "0"}),
            "--recover-wait-s must be positive");
  EXPECT_NE(usage_error({"--recover", "shrink", "--checkpoint", "/tmp/x"}).find("do not combine"),
            std::string::npos);
}

// After a shrink the steps from the resume point run at the new rank and size: the digest continues.
TEST(RunPlan, ExpectedDigestContinuesAcrossAShrink) {
  WorkloadArgs args;
  args.ops = {OpKind::kGather};  // the root (step % nranks) checks every rank's block: size and rank matter
  args.iters = 6;
  args.warmup = 0;
  const RunPlan plan = make_run_plan(args);
  const uint64_t before = plan.expected_digest(3, 4, 2);
  EXPECT_EQ(plan.expected_digest_from(0, 3, 4, 0, 2), before);
  const uint64_t shrunk = plan.expected_digest_from(before, 2, 3, 2, plan.total_steps());
  EXPECT_NE(shrunk, plan.expected_digest(3, 4, plan.total_steps()));
  EXPECT_EQ(plan.expected_digest_from(shrunk, 2, 3, plan.total_steps(), plan.total_steps()), shrunk);
}

TEST(WorkloadArgs, HelpIsNotAnError) {
  const char* argv[] = {"ncclfi-workload", "--help"};
  WorkloadArgs args;
  std::string help;
  EXPECT_FALSE(parse_workload_args(2, argv, args, help));
  EXPECT_NE(help.find("--checkpoint"), std::string::npos);
}

TEST(RunPlan, FingerprintChangesWithThePlanAndWorldSize) {
  const RunPlan a = make_run_plan(parse({}));
  const RunPlan b = make_run_plan(parse({"--iters", "21"}));
  const RunPlan c = make_run_plan(parse({"--bytes", "2M"}));
  EXPECT_EQ(a.fingerprint(2), make_run_plan(parse({})).fingerprint(2));
  EXPECT_NE(a.fingerprint(2), a.fingerprint(4));
  EXPECT_NE(a.fingerprint(2), b.fingerprint(2));
  EXPECT_NE(a.fingerprint(2), c.fingerprint(2));
}

}  // namespace
}  // namespace ncclfi::workload
