// The scenario loader's fuzz corpus through the fuzz target's own check, on every build (no clang
// needed): valid-* seeds load, bad-* seeds are refused with the file and a pointer, nothing else escapes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "scenario_fuzz_check.h"

namespace ncclfi::fuzz {
namespace {

namespace fs = std::filesystem;

TEST(ScenarioCorpusReplay, EverySeedKeepsTheInvariants) {
  size_t seeds = 0;
  for (const auto& entry : fs::directory_iterator(NCCLFI_SCENARIO_CORPUS_DIR)) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    const std::string bytes = text.str();
    const auto got = check_scenario_input(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    const std::string name = entry.path().filename().string();
    const bool valid = name.rfind("valid-", 0) == 0;
    EXPECT_EQ(got, valid ? ScenarioInput::kAccepted : ScenarioInput::kRejected) << name;
    ++seeds;
  }
  EXPECT_GE(seeds, 20u);
}

}  // namespace
}  // namespace ncclfi::fuzz
