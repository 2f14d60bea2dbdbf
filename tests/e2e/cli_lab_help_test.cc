// Golden file: the help of `ncclfi lab` and of each of its subcommands, byte for byte (the build
// directory shown as <build>, the source directory as <source>). After an intended change:
// NCCLFI_UPDATE_GOLDEN=1 ctest -R LabHelp.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "cli_process.h"

namespace ncclfi::e2e {
namespace {

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t p = 0; (p = text.find(from, p)) != std::string::npos; p += to.size())
    text.replace(p, from.size(), to);
  return text;
}

// The default catalogue is under the build tree: the help names it wherever the tree is.
std::string without_local_dirs(const std::string& text) {
  const std::string bin_dir = NCCLFI_BIN_DIR;
  const std::string build_dir = bin_dir.substr(0, bin_dir.rfind("/bin"));
  return replace_all(replace_all(text, build_dir, "<build>"), NCCLFI_SOURCE_DIR, "<source>");
}

TEST(LabHelp, EverySubcommandsHelpIsAsBefore) {
  std::string all;
  for (const char* sub :
       {"", "list", "start", "draw", "hint", "answer", "causes", "debrief", "key", "gradebook", "class"}) {
    std::vector<std::string> args = {"lab"};
    if (*sub != '\0') args.push_back(sub);
    args.push_back("--help");
    const auto help = run_cli(args);
    EXPECT_EQ(help.exit_code, 0) << sub << ": " << help.err;
    all += "==== ncclfi lab " + std::string(sub) + " --help\n" + without_local_dirs(help.out);
  }
  const std::string file = std::string(NCCLFI_SOURCE_DIR) + "/tests/e2e/golden/lab_help.txt";
  if (const char* update = std::getenv("NCCLFI_UPDATE_GOLDEN"); update != nullptr && *update == '1') {
    std::ofstream(file, std::ios::binary) << all;
    return;
  }
  std::ifstream in(file, std::ios::binary);
  ASSERT_TRUE(in) << file << " is missing (NCCLFI_UPDATE_GOLDEN=1 writes it)";
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(all, expected.str()) << "differs from " << file;
}

// A student's name becomes part of paths: one that climbs out ("../x"), names a directory ("a/b") or
// reads as an option is refused before anything is made.
TEST(LabStart, AStudentNameThatIsNotANameIsRefused) {
  for (const char* name : {"../escape", "a/b", ".hidden", "x y"}) {
    const auto r = run_cli({"lab", "start", "nic-failure", "--student", name, "--dir", "/nonexistent/never"});
    EXPECT_EQ(r.exit_code, 2) << name << ": " << r.out << r.err;
    EXPECT_NE(r.err.find("expected a name of 1-64 letters, digits"), std::string::npos)
        << name << ": " << r.err;
  }
}

}  // namespace
}  // namespace ncclfi::e2e
