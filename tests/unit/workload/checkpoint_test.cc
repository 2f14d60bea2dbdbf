#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "checkpoint.h"
#include "dtype.h"
#include "op_spec.h"
#include "workload_args.h"

namespace ncclfi::workload {
namespace {

Checkpoint sample() {
  Checkpoint c;
  c.rank = 1;
  c.world_size = 2;
  c.plan = 0x8c1f0e4d2a7b9e31ull;
  c.total_steps = 500;
  c.push({100, 0x9d3f61a0c2b4e857ull, 0});
  c.push({200, 0x1b2c3d4e5f607182ull, 3});
  return c;
}

TEST(Checkpoint, RoundTrips) {
  const Checkpoint c = sample();
  const std::string text = format_checkpoint(c);
  const Checkpoint back = parse_checkpoint(text);
  EXPECT_EQ(back.rank, 1);
  EXPECT_EQ(back.world_size, 2);
  EXPECT_EQ(back.plan, c.plan);
  EXPECT_EQ(back.total_steps, 500u);
  EXPECT_EQ(back.entries, c.entries);
  EXPECT_EQ(back.latest_step(), 200u);
  EXPECT_EQ(format_checkpoint(back), text);
}

TEST(Checkpoint, KeepsTheTwoNewestEntries) {
  Checkpoint c = sample();
  c.push({300, 7, 0});
  ASSERT_EQ(c.entries.size(), 2u);
  EXPECT_EQ(c.entries.front().next_step, 200u);
  EXPECT_TRUE(c.entry_at(200).has_value());
  EXPECT_TRUE(c.entry_at(300).has_value());
  EXPECT_FALSE(c.entry_at(100).has_value());
}

void expect_error(const std::string& text, const std::string& fragment) {
  try {
    parse_checkpoint(text);
    FAIL() << "accepted: " << text;
  } catch (const CheckpointError& error) {
    EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos) << error.what();
  }
}

TEST(Checkpoint, RejectsDamagedFiles) {
  const std::string good = format_checkpoint(sample());
  expect_error("", "empty");
  expect_error(good.substr(0, good.size() - 1), "truncated");
  expect_error(good.substr(0, good.find("crc")), "missing crc");
  std::string edited = good;
  edited[edited.find("entry 200") + 6] = '3';  // entry 300: crc no longer matches
  expect_error(edited, "crc mismatch");
  expect_error("something else\n", "line 1");
  expect_error("ncclfi-workload-checkpoint 1\nrank x\n", "bad rank");
  expect_error("ncclfi-workload-checkpoint 1\ncolour blue\n", "unknown key 'colour'");
  expect_error("ncclfi-workload-checkpoint 1\nentry 1 2\n", "takes 3 value(s)");
  expect_error("ncclfi-workload-checkpoint 1\nentry 5 0 0\nentry 4 0 0\n", "out of order");
  expect_error("ncclfi-workload-checkpoint 1\nrank 0\n", "missing");
  expect_error(good + "rank 0\n", "text after crc");
}

TEST(Checkpoint, RejectsInconsistentFieldsEvenWithAValidCrc) {
  Checkpoint c = sample();
  c.rank = 2;  // outside world_size 2
  expect_error(format_checkpoint(c), "outside world size");
  c = sample();
  c.total_steps = 150;  // entry 200 past the end
  expect_error(format_checkpoint(c), "past total_steps");
}

TEST(Checkpoint, FilesAreWrittenAtomicallyAndReadBack) {
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("ncclfi-ckpt-test-" + std::to_string(getpid()))).string();
  std::filesystem::remove_all(dir);
  EXPECT_FALSE(load_checkpoint_file(dir, 1).has_value());
  save_checkpoint_file(dir, sample());
  const auto loaded = load_checkpoint_file(dir, 1);
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->entries, sample().entries);
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    EXPECT_EQ(entry.path().filename().string(), "rank1.ckpt");  // no temporary left behind
  }
  std::ofstream(checkpoint_path(dir, 1), std::ios::app) << "junk\n";
  EXPECT_THROW(load_checkpoint_file(dir, 1), CheckpointError);
  std::filesystem::remove_all(dir);
}

TEST(Checkpoint, DigestDependsOnEveryField) {
  const uint64_t base = digest_step(0, 5, 0, 7, 1024, 0);
  EXPECT_EQ(base, digest_step(0, 5, 0, 7, 1024, 0));
  EXPECT_NE(base, digest_step(0, 6, 0, 7, 1024, 0));
  EXPECT_NE(base, digest_step(0, 5, 1, 7, 1024, 0));
  EXPECT_NE(base, digest_step(0, 5, 0, 9, 1024, 0));
  EXPECT_NE(base, digest_step(0, 5, 0, 7, 1025, 0));
  EXPECT_NE(base, digest_step(0, 5, 0, 7, 1024, 1));
  EXPECT_NE(base, digest_step(1, 5, 0, 7, 1024, 0));
  // Order matters: steps 1 then 2 differ from 2 then 1.
  EXPECT_NE(digest_step(digest_step(0, 1, 0, 7, 8, 0), 2, 0, 7, 8, 0),
            digest_step(digest_step(0, 2, 0, 7, 8, 0), 1, 0, 7, 8, 0));
}

TEST(Checkpoint, CommonResumeStepIsTheSmallest) {
  EXPECT_EQ(common_resume_step({}), 0u);
  EXPECT_EQ(common_resume_step({200, 100, 200}), 100u);
}

}  // namespace
}  // namespace ncclfi::workload

namespace ncclfi::workload {
namespace {

TEST(Checkpoint, ExpectedDigestFoldsEveryStepAndResumesExactly) {
  RunPlan plan;
  plan.cases = {{OpKind::kAllReduce, DType::kFloat, 1024}, {OpKind::kGather, DType::kHalf, 64}};
  plan.steps_per_case = 5;
  // Folding steps one by one (as the workload does, across a resume at step 4) gives the same digest.
  uint64_t digest = 0;
  for (uint64_t step = 0; step < plan.total_steps(); ++step) {
    const WorkloadCase& c = plan.cases[plan.case_of(step)];
    const OpLayout layout = make_layout(c.op, c.bytes, dtype_size(c.dtype), 1, 2, step);
    if (step == 4) {
      EXPECT_EQ(digest, plan.expected_digest(1, 2, 4));
    }
    digest = digest_step(digest, step, static_cast<int>(c.op), static_cast<int>(c.dtype),
                         defined_elements(layout), 0);
  }
  EXPECT_EQ(digest, plan.expected_digest(1, 2, plan.total_steps()));
  EXPECT_NE(digest, plan.expected_digest(0, 2, plan.total_steps()));  // gather: rank 0 is root on even steps
}

}  // namespace
}  // namespace ncclfi::workload
