// Replays every file of the fuzz seed corpus (tests/fuzz/corpus) through the same check the fuzzer
// runs, so the corpus and the parser's invariants are checked on every build, with gcc. Files named
// valid-* must be accepted, bad-* rejected.
#include <filesystem>

#include <gtest/gtest.h>

#include "../../fuzz/plan_fuzz_check.h"
#include "test_support.h"

namespace ncclfi {
namespace {

TEST(PlanCorpusReplay, EverySeedKeepsTheParsersInvariants) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(NCCLFI_FUZZ_CORPUS_DIR)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 20u) << NCCLFI_FUZZ_CORPUS_DIR;
  size_t valid = 0;
  for (const auto& file : files) {
    std::string bytes = test::read_text(file.string());
    const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
    fuzz::PlanInput result = fuzz::PlanInput::kNotJson;
    ASSERT_NO_THROW(result = fuzz::check_plan_input(data, bytes.size())) << file;
    std::string name = file.filename().string();
    if (name.rfind("valid-", 0) == 0) {
      EXPECT_EQ(result, fuzz::PlanInput::kAccepted) << name;
      ++valid;
    } else if (name.rfind("bad-", 0) == 0) {
      EXPECT_NE(result, fuzz::PlanInput::kAccepted) << name;
    }
  }
  EXPECT_GE(valid, 18u);  // one per fault kind at least
}

TEST(PlanCorpusReplay, ValidSeedsCoverEveryFaultKind) {
  std::set<std::pair<Layer, std::string>> covered;
  for (const auto& entry : std::filesystem::directory_iterator(NCCLFI_FUZZ_CORPUS_DIR)) {
    if (entry.path().filename().string().rfind("valid-", 0) != 0) continue;
    for (const Fault& f : load_plan_file(entry.path().string()).faults) covered.insert({f.layer, f.kind});
  }
  for (const FaultKindSpec* spec : fault_kinds()) {
    EXPECT_TRUE(covered.count({spec->layer, std::string(spec->kind)}))
        << to_string(spec->layer) << " " << spec->kind;
  }
}

}  // namespace
}  // namespace ncclfi
