// Run directories, the exit status and the output tailer: unique stamped dirs with a `latest` link;
// lines handed out only when complete, a torn last line only at the end.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "output_tailer.h"
#include "run_dir.h"
#include "suite_runner.h"

namespace ncclfi::cli {
namespace {

namespace fs = std::filesystem;

struct Tmp {
  Tmp() {
    std::string pattern = (fs::temp_directory_path() / "ncclfi-unit-XXXXXX").string();
    path = mkdtemp(pattern.data());
  }
  ~Tmp() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string path;
};

TEST(RunDir, StampedUniqueAndLatestLink) {
  Tmp tmp;
  const std::string a = make_run_dir(tmp.path, "s");
  const std::string b = make_run_dir(tmp.path, "s");
  EXPECT_NE(a, b);
  EXPECT_TRUE(fs::is_directory(a));
  EXPECT_TRUE(fs::is_directory(b));
  EXPECT_EQ(fs::canonical(tmp.path + "/s/latest"), fs::canonical(b));
  EXPECT_EQ(utc_stamp().size(), std::string("20261130T194512.123Z").size());
}

// The exit code asks the same status function as every report.
TEST(ExitStatus, FromRunStatus) {
  auto run = [](harness::Answer verdict, bool skipped = false, const std::string& error = "") {
    harness::RunRecord r;
    r.judgement.verdict = verdict;
    r.skipped = skipped;
    r.harness_error = error;
    return r;
  };
  using harness::Answer;
  EXPECT_EQ(exit_status_for({run(Answer::kPass), run(Answer::kFail, true)}), kAllPassed);
  EXPECT_EQ(exit_status_for({run(Answer::kPass), run(Answer::kUnknown)}), kSomeFailed);
  EXPECT_EQ(exit_status_for({run(Answer::kFail)}), kSomeFailed);
  EXPECT_EQ(exit_status_for({run(Answer::kFail), run(Answer::kPass, false, "cannot start")}), kHarnessError);
}

TEST(OutputTailer, CompleteLinesOnlyThenTheRest) {
  Tmp tmp;
  const std::string file = tmp.path + "/log";
  OutputTailer tail(file);
  EXPECT_TRUE(tail.read_lines().empty());  // missing file: nothing yet
  std::ofstream out(file);
  out << "one\ntw" << std::flush;
  EXPECT_EQ(tail.read_lines(), std::vector<std::string>{"one"});
  out << "o\nthr" << std::flush;
  EXPECT_EQ(tail.read_lines(), std::vector<std::string>{"two"});
  EXPECT_EQ(tail.read_rest(), std::vector<std::string>{"thr"});
  EXPECT_EQ(OutputTailer::file_size(file), 11);
  OutputTailer from_offset(file, 4);
  EXPECT_EQ(from_offset.read_rest(), (std::vector<std::string>{"two", "thr"}));
}

// One call takes a bounded slice, so a job that logs faster than the harness parses cannot hold its
// poll loop (deadline, proc faults); the rest comes on the next calls, and read_rest takes it all.
TEST(OutputTailer, OneReadTakesABoundedSlice) {
  Tmp tmp;
  const std::string file = tmp.path + "/events";
  const std::string line(99, 'x');
  {
    std::ofstream out(file);
    for (int i = 0; i < 10; ++i) out << line << "\n";  // 1000 bytes
  }
  OutputTailer tail(file);
  EXPECT_EQ(tail.read_lines(250).size(), 2u);  // 250 bytes: two whole lines, half of the third held
  EXPECT_EQ(tail.offset(), 250);
  EXPECT_EQ(tail.read_lines(250).size(), 3u);  // the held half completes the third
  EXPECT_EQ(tail.read_rest().size(), 5u);
  EXPECT_EQ(tail.offset(), 1000);
  EXPECT_GT(OutputTailer::kMaxBytesPerRead, 64u << 10);  // still many thousand event lines per poll
}

}  // namespace
}  // namespace ncclfi::cli
