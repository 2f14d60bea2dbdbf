// Hostile plan files and JSON texts: a FIFO or a huge file as NCCLFI_PLAN leaves the rank inert at
// once instead of blocking it or costing it gigabytes; deep nesting, duplicate keys, numbers out of
// range and NUL bytes become errors with a pointer.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>

#include <gtest/gtest.h>

#include "ncclfi/bounded_input.h"
#include "ncclfi/event_log.h"
#include "ncclfi/injector.h"
#include "test_support.h"

namespace ncclfi {
namespace {

Params params_with_plan(const test::TempDir& dir, const std::string& plan_path) {
  Params p;
  p.plan_path = plan_path;
  p.events_path = dir.file("events.jsonl");
  p.run_dir = dir.path();
  return p;
}

// Before: open() on the FIFO blocked every rank forever (no writer ever comes).
TEST(RobustPlanFile, FifoPlanLeavesTheInjectorInertWithoutBlocking) {
  test::TempDir dir;
  const std::string fifo = dir.file("plan.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  Injector injector(params_with_plan(dir, fifo), Layer::kApi, "preload");
  EXPECT_TRUE(injector.inert());
  EXPECT_NE(injector.load_error().find("not a regular file (a FIFO)"), std::string::npos)
      << injector.load_error();
}

// Before: a 1 GB plan was read whole (27 s, 4 GB per rank). A sparse file costs no disk.
TEST(RobustPlanFile, HugePlanIsRefusedBeforeItIsRead) {
  test::TempDir dir;
  const std::string big = dir.file("plan.json");
  const int fd = ::open(big.c_str(), O_CREAT | O_WRONLY, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, off_t{1} << 30), 0);
  ::close(fd);
  Injector injector(params_with_plan(dir, big), Layer::kNet, "net");
  EXPECT_TRUE(injector.inert());
  EXPECT_NE(injector.load_error().find("larger than"), std::string::npos) << injector.load_error();
}

TEST(RobustPlanFile, DirectoryIsRefused) {
  test::TempDir dir;
  std::string text;
  EXPECT_EQ(read_regular_file(dir.path(), kMaxInputFileBytes, text), "not a regular file (a directory)");
}

TEST(RobustJson, DeepNestingStopsAtTheLimit) {
  const std::string deep(200'000, '[');
  try {
    (void)parse_json_input(deep);
    FAIL() << "accepted";
  } catch (const JsonInputError& e) {
    EXPECT_NE(e.expected().find("at most 64 levels"), std::string::npos) << e.what();
  }
  std::string ok;
  for (size_t i = 0; i < kMaxJsonDepth; ++i) ok += '[';
  for (size_t i = 0; i < kMaxJsonDepth; ++i) ok += ']';
  EXPECT_NO_THROW((void)parse_json_input(ok));
}

TEST(RobustJson, DuplicateKeyIsNamedByItsPointer) {
  try {
    (void)parse_json_input(R"({"faults":[{"id":"a"},{"id":"b","kind":"x","kind":"y"}]})");
    FAIL() << "accepted";
  } catch (const JsonInputError& e) {
    EXPECT_EQ(e.pointer(), "/faults/1/kind");
    EXPECT_EQ(e.found(), "a duplicate key");
  }
  EXPECT_NO_THROW((void)parse_json_input(R"({"a":{"k":1},"b":{"k":2}})"));
}

TEST(RobustJson, NumberOutOfRangeIsAnInputError) {
  try {
    (void)parse_json_input(R"({"deadline_s": 1e400})");
    FAIL() << "accepted";
  } catch (const JsonInputError& e) {
    EXPECT_NE(e.found().find("1e400"), std::string::npos) << e.what();
  }
}

TEST(RobustJson, NulInKeyIsEscapedInMessages) {
  EXPECT_EQ(printable(std::string("a\0b", 3)), "a\\u0000b");
  const PlanError e("plan.json", std::string("/a\0b", 4), "no such key", "x");
  EXPECT_NE(std::string(e.what()).find("/a\\u0000b: expected no such key, got x"), std::string::npos)
      << e.what();
}

}  // namespace
}  // namespace ncclfi

namespace ncclfi {
namespace {

// A full disk, made with a file size limit: the writer counts what it could not write and says so with
// the next line that fits. Before, the lines were dropped without a trace.
TEST(RobustEventLog, LinesThatCannotBeWrittenAreCountedAndAnnounced) {
  test::TempDir dir;
  const std::string path = dir.file("events.jsonl");
  const int code = test::run_in_child([&] {
    ::signal(SIGXFSZ, SIG_IGN);  // a write past the limit fails with EFBIG instead of killing us
    rlimit limit{};
    ::getrlimit(RLIMIT_FSIZE, &limit);
    const rlimit small{300, limit.rlim_max};
    EventLog log(path, "workload", 0);
    ::setrlimit(RLIMIT_FSIZE, &small);
    int failed = 0;
    for (int i = 0; i < 10; ++i) failed += log.write("step", {{"i", i}}) ? 0 : 1;
    if (failed == 0 || log.lost() != static_cast<uint64_t>(failed)) return 1;
    ::setrlimit(RLIMIT_FSIZE, &limit);  // room again
    if (!log.write("done")) return 2;
    return 0;
  });
  ASSERT_EQ(code, 0);
  const std::string text = test::read_text(path);
  const auto lost_at = text.find("\"event\":\"events_lost\"");
  ASSERT_NE(lost_at, std::string::npos) << text;
  EXPECT_LT(lost_at, text.find("\"event\":\"done\""));
}

}  // namespace
}  // namespace ncclfi
