// Concurrent runs into one --out get their own directories; control FIFOs of dead ranks are removed.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "ncclfi/injector.h"
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
