// Runtime control: `ncclfi arm|disarm` reaches a live process through its libfiu FIFO in the run
// directory, and a dead process's stale FIFO is skipped within the timeout instead of hanging.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "ncclfi/injector.h"
#include "test_support.h"

namespace ncclfi {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using Steady = std::chrono::steady_clock;

// Counters shared with a forked child.
struct Shared {
  std::atomic<uint64_t> checks{0};
  std::atomic<uint64_t> fired{0};
};

Shared* map_shared() {
  void* mem = ::mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  return new (mem) Shared();
}

std::string write_control_plan(const test::TempDir& dir, bool control) {
  json f = test::fault_json("ctl-fault", "api", "delay");
  f["params"] = {{"ms", 0}};
  f["trigger"] = {{"count", 0}, {"armed", false}};
  json plan = {{"seed", 1}, {"control", control}, {"faults", {f}}};
  test::write_text(dir.file("plan.json"), plan.dump());
  return dir.file("plan.json");
}

// A rank process: builds its Injector (which opens the FIFO) and checks a point until killed.
pid_t spawn_controlled_rank(const test::TempDir& dir, Shared* shared) {
  std::string plan = write_control_plan(dir, true);
  std::string run_dir = dir.path();
  return test::spawn([=] {
    Params p;
    p.plan_path = plan;
    p.run_dir = run_dir;
    p.rank = 0;
    p.world_size = 1;
    Injector injector(p, Layer::kApi, "preload");
    FaultPoint point("nccl/coll/allreduce");
    std::array<FaultPoint*, 1> points{&point};
    injector.install(points);
    CallSite site{.rank = 0, .world_size = 1, .op = "allreduce"};
    for (;;) {
      if (point.check(site) != nullptr) shared->fired.fetch_add(1);
      shared->checks.fetch_add(1);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return 0;
  });
}

std::string fifo_of(const test::TempDir& dir, pid_t pid) {
  return dir.file("ncclfi-preload-" + std::to_string(pid) + ".in");
}

// Waits until `pred` holds or `limit` passes.
template <typename Pred>
bool eventually(Pred pred, milliseconds limit) {
  auto end = Steady::now() + limit;
  while (Steady::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(milliseconds(5));
  }
  return pred();
}

TEST(Control, ArmThenDisarmALiveProcess) {
  test::TempDir dir;
  Shared* shared = map_shared();
  pid_t child = spawn_controlled_rank(dir, shared);
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(fifo_of(dir, child)); }, milliseconds(5000)));
  ASSERT_TRUE(eventually([&] { return shared->checks.load() > 50; }, milliseconds(5000)));
  EXPECT_EQ(shared->fired.load(), 0u);  // disarmed: never fires

  ControlResult armed = send_control(dir.path(), "ctl-fault", true, 2000);
  EXPECT_EQ(armed.acknowledged, 1);
  EXPECT_EQ(armed.skipped_dead, 0);
  EXPECT_EQ(armed.timed_out, 0);
  EXPECT_TRUE(eventually([&] { return shared->fired.load() > 20; }, milliseconds(5000)));

  ControlResult disarmed = send_control(dir.path(), "ctl-fault", false, 2000);
  EXPECT_EQ(disarmed.acknowledged, 1);
  // A check already past libfiu when the disarm landed may still count: let the child finish that
  // loop iteration (it bumps `checks` after `fired`) before taking the reference.
  uint64_t at_disarm = shared->checks.load();
  ASSERT_TRUE(eventually([&] { return shared->checks.load() > at_disarm + 1; }, milliseconds(5000)));
  uint64_t after_disarm = shared->fired.load();
  uint64_t checks = shared->checks.load();
  ASSERT_TRUE(eventually([&] { return shared->checks.load() > checks + 50; }, milliseconds(5000)));
  EXPECT_EQ(shared->fired.load(), after_disarm);

  ::kill(child, SIGKILL);
  EXPECT_EQ(test::wait_exit(child), 128 + SIGKILL);
  ::munmap(shared, sizeof(Shared));
}

TEST(Control, NoFifoWithoutControl) {
  test::TempDir dir;
  std::string plan = write_control_plan(dir, false);
  json doc = json::parse(test::read_text(plan));
  doc["faults"][0]["trigger"]["armed"] = true;
  test::write_text(plan, doc.dump());
  EXPECT_EQ(test::run_in_child([&] {
              Params p;
              p.plan_path = plan;
              p.run_dir = dir.path();
              Injector injector(p, Layer::kApi, "preload");
              return std::filesystem::exists(fifo_of(dir, ::getpid())) ? 1 : 0;
            }),
            0);
}

TEST(Control, ADeadProcessesStaleFifoIsSkipped) {
  test::TempDir dir;
  Shared* shared = map_shared();
  pid_t live = spawn_controlled_rank(dir, shared);
  Shared* other = map_shared();
  pid_t doomed = spawn_controlled_rank(dir, other);
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(fifo_of(dir, doomed)); }, milliseconds(5000)));
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(fifo_of(dir, live)); }, milliseconds(5000)));
  ::kill(doomed, SIGKILL);
  EXPECT_EQ(test::wait_exit(doomed), 128 + SIGKILL);
  ASSERT_TRUE(std::filesystem::exists(fifo_of(dir, doomed)));  // left behind

  auto start = Steady::now();
  ControlResult r = send_control(dir.path(), "ctl-fault", true, 1000);
  auto took = Steady::now() - start;
  EXPECT_EQ(r.acknowledged, 1);
  EXPECT_EQ(r.skipped_dead, 1);
  EXPECT_EQ(r.timed_out, 0);
  EXPECT_LT(took, milliseconds(1000));
  EXPECT_TRUE(eventually([&] { return shared->fired.load() > 0; }, milliseconds(5000)));
  EXPECT_EQ(other->fired.load(), 0u);

  ::kill(live, SIGKILL);
  test::wait_exit(live);
  ::munmap(shared, sizeof(Shared));
  ::munmap(other, sizeof(Shared));
}

TEST(Control, ALiveProcessThatNeverReadsTimesOut) {
  // A FIFO pair named after a live process (this one) that nobody serves: the writer gets no reader.
  test::TempDir dir;
  std::string stem = dir.file("ncclfi-preload-" + std::to_string(::getpid()));
  ASSERT_EQ(::mkfifo((stem + ".in").c_str(), 0600), 0);
  ASSERT_EQ(::mkfifo((stem + ".out").c_str(), 0600), 0);
  auto start = Steady::now();
  ControlResult r = send_control(dir.path(), "x", true, 300);
  auto took = Steady::now() - start;
  EXPECT_EQ(r.acknowledged, 0);
  EXPECT_EQ(r.timed_out, 1);
  EXPECT_GE(took, milliseconds(250));
  EXPECT_LT(took, milliseconds(1500));
}

// A rank can write in its run directory. A symlink named as a control FIFO must not have the command
// written over its target, and a regular file must not read as an acknowledgement.
TEST(Control, PlantedSymlinksAndFilesAreRefusedAndNeverWrittenThrough) {
  test::TempDir dir;
  const std::string victim = dir.file("victim.txt");
  test::write_text(victim, "precious\n");
  const std::string stem = dir.file("ncclfi-preload-" + std::to_string(::getpid()));
  ASSERT_EQ(::mkfifo((stem + ".out").c_str(), 0600), 0);
  ASSERT_EQ(::symlink(victim.c_str(), (stem + ".in").c_str()), 0);
  ControlResult through_link = send_control(dir.path(), "x", true, 300);
  EXPECT_EQ(through_link.acknowledged, 0);
  EXPECT_EQ(through_link.refused, 1);
  EXPECT_EQ(test::read_text(victim), "precious\n") << "the command was written through the symlink";

  std::filesystem::remove(stem + ".out");
  std::filesystem::remove(stem + ".in");
  test::write_text(stem + ".out", "0\n");  // a forged answer
  ASSERT_EQ(::mkfifo((stem + ".in").c_str(), 0600), 0);
  ControlResult forged = send_control(dir.path(), "x", true, 300);
  EXPECT_EQ(forged.acknowledged, 0);
  EXPECT_EQ(forged.refused, 1);
}

// FIFOs named after a live process that does not hold them, served by another (this test): whoever
// answers is not the rank that was asked, so nothing is written and nothing counts.
TEST(Control, AnAnswerFromAProcessOtherThanTheNamedOneIsRefused) {
  test::TempDir dir;
  const pid_t bystander = test::spawn([] {
    ::pause();
    return 0;
  });
  const std::string stem = dir.file("ncclfi-preload-" + std::to_string(bystander));
  ASSERT_EQ(::mkfifo((stem + ".in").c_str(), 0600), 0);
  ASSERT_EQ(::mkfifo((stem + ".out").c_str(), 0600), 0);
  std::string got;
  std::thread impostor([&] {
    const int in = ::open((stem + ".in").c_str(), O_RDONLY);  // blocks until a writer opens
    if (in < 0) return;
    char buf[128];
    ssize_t n = 0;
    while ((n = ::read(in, buf, sizeof buf)) > 0) got.append(buf, static_cast<size_t>(n));
    ::close(in);
  });
  ControlResult r = send_control(dir.path(), "x", true, 300);
  // Release the impostor if the harness never opened `.in`.
  const int unblock = ::open((stem + ".in").c_str(), O_WRONLY | O_NONBLOCK);
  if (unblock >= 0) ::close(unblock);
  impostor.join();
  EXPECT_EQ(r.acknowledged, 0);
  EXPECT_EQ(r.refused, 1);
  EXPECT_EQ(got, "") << "the command reached a process that was not asked";
  ::kill(bystander, SIGKILL);
  test::wait_exit(bystander);
}

// A rank torn down while a command is under way: it has exited (not yet reaped) and no longer holds
// its FIFO, which another process still has open. That rank is gone, not an impostor, and the wait
// for it ends at once instead of at the timeout.
TEST(Control, ARankThatExitedWhileAskedIsDeadNotRefused) {
  test::TempDir dir;
  const pid_t exited = test::spawn([] { return 0; });
  ASSERT_TRUE(eventually(
      [&] {
        const std::string stat = test::read_text("/proc/" + std::to_string(exited) + "/stat");
        const auto paren = stat.rfind(')');
        return paren != std::string::npos && stat.compare(paren, 3, ") Z") == 0;
      },
      milliseconds(5000)))
      << "the child never became a zombie";
  const std::string stem = dir.file("ncclfi-preload-" + std::to_string(exited));
  ASSERT_EQ(::mkfifo((stem + ".in").c_str(), 0600), 0);
  ASSERT_EQ(::mkfifo((stem + ".out").c_str(), 0600), 0);
  const int leftover_reader = ::open((stem + ".in").c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(leftover_reader, 0);
  const auto start = Steady::now();
  ControlResult r = send_control(dir.path(), "x", false, 2000);
  const auto took = Steady::now() - start;
  EXPECT_EQ(r.skipped_dead, 1);
  EXPECT_EQ(r.refused, 0);
  EXPECT_EQ(r.acknowledged, 0);
  EXPECT_LT(took, milliseconds(1000));
  char buf[64];
  EXPECT_LE(::read(leftover_reader, buf, sizeof buf), 0) << "a command was written for a dead rank";
  ::close(leftover_reader);
  test::wait_exit(exited);
}

TEST(Control, MissingRunDirAndForeignFilesAreHarmless) {
  ControlResult none = send_control("/nonexistent/ncclfi-run", "x", true, 100);
  EXPECT_EQ(none.acknowledged + none.skipped_dead + none.timed_out, 0);
  test::TempDir dir;
  test::write_text(dir.file("notes.in"), "");
  test::write_text(dir.file("ncclfi-preload-abc.in"), "");
  test::write_text(dir.file("ncclfi-preload-0.in"), "");
  ControlResult r = send_control(dir.path(), "x", true, 100);
  EXPECT_EQ(r.acknowledged + r.skipped_dead + r.timed_out + r.refused, 0);
}

}  // namespace
}  // namespace ncclfi
