// Concurrent runs into one --out get their own directories; control FIFOs of dead ranks are removed.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "ncclfi/injector.h"
#include "run_cgroup.h"
#include "run_dir.h"

namespace ncclfi::cli {
namespace {

namespace fs = std::filesystem;

struct ScratchDir {
  ScratchDir() {
    std::string tmpl = fs::temp_directory_path().string() + "/ncclfi-robust-XXXXXX";
    path = ::mkdtemp(tmpl.data());
  }
  ~ScratchDir() { fs::remove_all(path); }
  std::string path;
};

// Before: a suite dir was <stamp> with create_directories, so runs in one millisecond shared it.
TEST(RobustRunFiles, SuiteDirsMadeInOneMillisecondAreDistinct) {
  ScratchDir root;
  std::set<std::string> dirs;
  for (int i = 0; i < 50; ++i) dirs.insert(make_suite_dir(root.path));
  EXPECT_EQ(dirs.size(), 50u);
  EXPECT_TRUE(fs::is_symlink(root.path + "/suites/latest"));
}

TEST(RobustRunFiles, ControlFifosOfDeadProcessesAreRemovedOthersKept) {
  ScratchDir dir;
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);  // a pid that is certainly gone
  const std::string dead = dir.path + "/ncclfi-net-" + std::to_string(child);
  const std::string live = dir.path + "/ncclfi-preload-" + std::to_string(::getpid());
  for (const auto& base : {dead, live}) {
    ASSERT_EQ(::mkfifo((base + ".in").c_str(), 0600), 0);
    ASSERT_EQ(::mkfifo((base + ".out").c_str(), 0600), 0);
  }
  std::ofstream(dir.path + "/ncclfi-notes-1.in") << "a regular file is never removed";
  EXPECT_EQ(remove_dead_control_fifos(dir.path), 2);
  EXPECT_FALSE(fs::exists(dead + ".in"));
  EXPECT_FALSE(fs::exists(dead + ".out"));
  EXPECT_TRUE(fs::exists(live + ".in"));
  EXPECT_TRUE(fs::exists(dir.path + "/ncclfi-notes-1.in"));
}

}  // namespace
}  // namespace ncclfi::cli

namespace ncclfi::cli {
namespace {

// An ncclfi that was SIGKILLed leaves its (emptied) cgroup; the next one removes it, and a cgroup of its
// own kills what is left in it.
TEST(RobustRunFiles, StaleCgroupsAreRemovedAndMembersKilled) {
  std::string root;
  {
    std::ifstream mounts("/proc/self/mounts");
    std::string device, dir, type, rest;
    while (mounts >> device >> dir >> type && std::getline(mounts, rest)) {
      if (type == "cgroup2") root = dir;
    }
  }
  const pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(gone, nullptr, 0), gone);
  const std::string stale = root + "/ncclfi-" + std::to_string(gone) + "-1";
  if (root.empty() || ::mkdir(stale.c_str(), 0755) != 0) GTEST_SKIP() << "no writable cgroup v2 hierarchy";
  auto cgroup = RunCgroup::create("ncclfi-" + std::to_string(::getpid()) + "-robustness-test");
  ASSERT_NE(cgroup, nullptr);
  EXPECT_FALSE(fs::exists(stale));
  const pid_t member = ::fork();
  if (member == 0) {
    ::pause();
    ::_exit(0);
  }
  ASSERT_TRUE(cgroup->add(member));
  EXPECT_EQ(cgroup->members(), std::vector<int>{member});
  EXPECT_EQ(cgroup->kill_all(), std::vector<int>{member});
  int status = 0;
  ASSERT_EQ(::waitpid(member, &status, 0), member);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  EXPECT_TRUE(cgroup->members().empty());
}

}  // namespace
}  // namespace ncclfi::cli
