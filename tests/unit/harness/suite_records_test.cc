// What a suite holds of its runs: a long suite (a soak) spools each record to disk as the run ends and
// reads them back, in order, only for its reports; a short one keeps them in memory; a spool that fails
// (a full disk) or a line that cannot be read back loses no record.
#include "suite_records.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>

#include "judge.h"
#include "judge/history_builder.h"
#include "reports.h"

namespace ncclfi::cli {
namespace {

namespace fs = std::filesystem;
using harness::RunRecord;
using namespace harness::testing;

fs::path scratch(const std::string& name) {
  const fs::path dir = scratch_root() / "suite-records" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Run i: passed (a detection that was expected), failed (expected clean) or skipped, in turn.
RunRecord run(size_t i) {
  RunRecord r;
  r.scenario = "run-" + std::to_string(i);
  if (i % 3 == 2) {
    r.skipped = true;
    r.skip_reason = "needs 2 GPUs";
    return r;
  }
  const nlohmann::json expect = {{"outcome", i % 3 == 0 ? "detected" : "clean"}};
  r.expect = harness::parse_expectation(expect);
  r.history = make_history(2);
  add_event(r.history, 0.5, 0, "workload", "op", {{"seq", 1}, {"dur_us", 10}});
  add_inject(r.history, 1.0, 1);
  add_detection(r.history, 2.0, 0, "workload_watchdog");
  all_exit(r.history, 2.5, 3);
  r.judgement = harness::judge(r.history, expect);
  return r;
}

size_t lines_in(const fs::path& file) {
  std::ifstream in(file);
  size_t n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

TEST(SuiteRecords, ALongSuiteSpoolsEveryRunAsItEndsAndReadsThemBackInOrder) {
  const fs::path dir = scratch("long");
  const fs::path spool = dir / "spool.jsonl";
  const size_t n = harness::kSuiteRunsWithFullHistory + 20;
  std::vector<RunRecord> all;
  {
    SuiteRecords records(spool.string(), n);
    for (size_t i = 0; i < n; ++i) {
      records.add(run(i));
      ASSERT_EQ(lines_in(spool), i + 1) << "run " << i << " is not on disk when it ends";
    }
    all = records.take_all();
  }
  EXPECT_FALSE(fs::exists(spool)) << "the spool outlived the suite";
  ASSERT_EQ(all.size(), n);
  for (size_t i = 0; i < n; ++i) {
    RunRecord want = run(i);
    const bool passed = harness::run_status(want) == harness::RunStatus::kPass;
    if (passed) harness::trim_history(want);  // its run directory has the whole history
    EXPECT_EQ(all[i].scenario, want.scenario);
    EXPECT_EQ(all[i].history_trimmed, passed) << want.scenario;
    EXPECT_EQ(harness::verdict_json(all[i]), harness::verdict_json(want)) << want.scenario;
  }
  EXPECT_EQ(harness::run_status(all[1]), harness::RunStatus::kFail);
  EXPECT_FALSE(all[1].history.events.empty()) << "a run that did not pass keeps its whole history";
}

TEST(SuiteRecords, AShortSuiteKeepsEveryRecordWholeInMemoryAndWritesNoSpool) {
  const fs::path dir = scratch("short");
  SuiteRecords records((dir / "spool.jsonl").string(), 3);
  for (size_t i = 0; i < 3; ++i) records.add(run(i));
  EXPECT_FALSE(fs::exists(dir / "spool.jsonl"));
  const auto all = records.take_all();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_FALSE(all[0].history_trimmed);
  EXPECT_FALSE(all[0].history.events.empty());
}

// A file size limit stands in for a disk that fills mid-suite: the spool takes what fits, whole lines
// only, and the rest stays in memory in its place.
TEST(SuiteRecords, RecordsTheSpoolCannotTakeStayInMemoryInTheirPlace) {
  const fs::path dir = scratch("full");
  const fs::path spool = dir / "spool.jsonl";
  const size_t n = harness::kSuiteRunsWithFullHistory + 5;
  rlimit before{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &before), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  std::vector<RunRecord> all;
  size_t spooled = 0;
  {
    SuiteRecords records(spool.string(), n);
    records.add(run(0));
    const auto one_line = static_cast<rlim_t>(fs::file_size(spool));
    rlimit limit = before;
    limit.rlim_cur = one_line * 5 / 2;  // room for two more lines and half of a third
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limit), 0);
    for (size_t i = 1; i < n; ++i) records.add(run(i));
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &before), 0);
    spooled = lines_in(spool);
    all = records.take_all();
  }
  std::signal(SIGXFSZ, old_handler);
  EXPECT_GE(spooled, 1u);
  EXPECT_LT(spooled, n) << "the limit did not bite: the test proves nothing";
  ASSERT_EQ(all.size(), n);
  for (size_t i = 0; i < n; ++i) {
    EXPECT_EQ(all[i].scenario, "run-" + std::to_string(i));
    EXPECT_TRUE(all[i].harness_error.empty()) << all[i].harness_error;
  }
}

TEST(SuiteRecords, ASpooledLineThatCannotBeReadBackIsAnErrorRecordNeverADroppedOne) {
  const fs::path dir = scratch("torn");
  const fs::path spool = dir / "spool.jsonl";
  const size_t n = harness::kSuiteRunsWithFullHistory + 1;
  SuiteRecords records(spool.string(), n);
  for (size_t i = 0; i < 3; ++i) records.add(run(i));
  {
    std::fstream f(spool, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(0);
    f << "garbage";  // the first line, torn
  }
  const auto all = records.take_all();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_NE(all[0].harness_error.find("could not be read back"), std::string::npos);
  EXPECT_EQ(harness::run_status(all[0]), harness::RunStatus::kError);
  EXPECT_EQ(all[1].scenario, "run-1");
  EXPECT_EQ(all[2].scenario, "run-2");
}

TEST(SuiteRecords, APlantedFileAtTheSpoolPathIsNeverWrittenThrough) {
  const fs::path dir = scratch("planted");
  const fs::path target = dir / "target";
  std::ofstream(target) << "keep me";
  fs::create_symlink(target, dir / "spool.jsonl");
  {
    SuiteRecords records((dir / "spool.jsonl").string(), harness::kSuiteRunsWithFullHistory + 1);
    records.add(run(0));
    const auto all = records.take_all();
    ASSERT_EQ(all.size(), 1u);
    EXPECT_EQ(all[0].scenario, "run-0");
  }
  std::ifstream in(target);
  std::string text;
  std::getline(in, text);
  EXPECT_EQ(text, "keep me");
  EXPECT_TRUE(in.peek() == std::char_traits<char>::eof());
  EXPECT_TRUE(fs::is_symlink(dir / "spool.jsonl"));
}

}  // namespace
}  // namespace ncclfi::cli
