// Reports are written by renaming a new file over the path: a device node, a FIFO or a symbolic link
// there would be replaced (`--metrics /dev/full` replaced the host's /dev/full with a regular file). Such
// paths are refused before anything runs, and by the writer itself, and what was there stays.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "atomic_file.h"

namespace ncclfi {
namespace {

namespace fs = std::filesystem;

struct Cli {
  int exit_code = -1;
  std::string err;
};

Cli run_cli(const std::vector<std::string>& args) {
  const std::string err_path = ::testing::TempDir() + "cli-" + std::to_string(getpid()) + ".err";
  const pid_t pid = fork();
  if (pid == 0) {
    const int out = ::open("/dev/null", O_WRONLY);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(out, 1);
    dup2(err, 2);
    std::vector<char*> argv{const_cast<char*>(NCCLFI_CLI)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(NCCLFI_CLI, argv.data());
    _exit(127);
  }
  Cli cli;
  int status = 0;
  if (waitpid(pid, &status, 0) == pid && WIFEXITED(status)) cli.exit_code = WEXITSTATUS(status);
  std::ifstream in(err_path);
  std::stringstream text;
  text << in.rdbuf();
  cli.err = text.str();
  return cli;
}

bool is_char_device(const char* path) {
  struct stat st {};
  return ::lstat(path, &st) == 0 && S_ISCHR(st.st_mode);
}

const std::string kScenario = std::string(NCCLFI_SOURCE_DIR) + "/scenarios/cpu/cpu-ring-clean.json";

TEST(RobustOutputFiles, MetricsOnADeviceIsRefusedBeforeTheRunAndTheDeviceStays) {
  ASSERT_TRUE(is_char_device("/dev/full"));
  const std::string out = ::testing::TempDir() + "runs-" + std::to_string(getpid());
  const Cli cli = run_cli({"run", kScenario, "--out", out, "--metrics", "/dev/full", "-q"});
  EXPECT_EQ(cli.exit_code, 2) << cli.err;
  EXPECT_NE(cli.err.find("--metrics /dev/full: expected a path for a regular file, got a character device"),
            std::string::npos)
      << cli.err;
  EXPECT_TRUE(is_char_device("/dev/full"));
  EXPECT_FALSE(fs::exists(out)) << "the run started";
}

TEST(RobustOutputFiles, SymlinksAndFifosAreRefusedAndLeftAsTheyWere) {
  const std::string dir = ::testing::TempDir() + "outputs-" + std::to_string(getpid());
  fs::create_directories(dir);
  const std::string target = dir + "/precious.txt", link = dir + "/junit.xml", fifo = dir + "/report.html";
  std::ofstream(target) << "keep me";
  fs::create_symlink(target, link);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const auto& [flag, path] : {std::pair{"--junit", link}, std::pair{"--html", fifo}}) {
    const Cli cli = run_cli({"run", kScenario, "--out", dir + "/runs", flag, path, "-q"});
    EXPECT_EQ(cli.exit_code, 2) << cli.err;
    EXPECT_NE(cli.err.find(std::string(flag) + " " + path + ": expected a path for a regular file"),
              std::string::npos)
        << cli.err;
  }
  // The writer itself refuses too (a path replaced while the suite ran, `ncclfi timeouts --json`).
  EXPECT_THROW(harness::write_file_atomic(link, "x"), std::runtime_error);
  EXPECT_THROW(harness::write_file_atomic(fifo, "x"), std::runtime_error);
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_TRUE(fs::is_fifo(fifo));
  std::ifstream in(target);
  std::string kept;
  std::getline(in, kept);
  EXPECT_EQ(kept, "keep me");
  // A regular file, or no file yet, is written as before.
  harness::write_file_atomic(dir + "/new.txt", "new");
  harness::write_file_atomic(target, "replaced");
  EXPECT_EQ(harness::not_a_regular_file(target), "");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ncclfi
