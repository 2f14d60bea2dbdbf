// The mechanism registry (model/mechanisms/) is the one statement of which detection mechanisms exist:
// the validator, the output classifier, the exit-code mapping and the docs' tables all follow it.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "mechanisms.h"
#include "ncclfi/workload_contract.h"
#include "observe.h"

namespace ncclfi::harness {
namespace {

std::string read_doc(const std::string& name) {
  std::ifstream in(std::string(NCCLFI_SOURCE_DIR "/docs/") + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// GitHub's heading anchor: lower case, punctuation but '-' and '_' dropped, spaces to '-'.
std::set<std::string> heading_anchors(const std::string& markdown) {
  std::set<std::string> anchors;
  std::istringstream lines(markdown);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] != '#') continue;
    std::string anchor;
    for (char c : line.substr(line.find_first_not_of('#'))) {
      const auto u = static_cast<unsigned char>(c);
      if (std::isalnum(u) || c == '-' || c == '_') anchor += static_cast<char>(std::tolower(u));
      if (c == ' ') anchor += '-';
    }
    if (!anchor.empty() && anchor[0] == '-') anchor.erase(0, 1);
    anchors.insert(anchor);
  }
  return anchors;
}

TEST(MechanismRegistry, EveryMechanismIsCompleteAndFoundByItsName) {
  std::set<std::string_view> names;
  std::set<std::string_view> line_ids;
  for (const MechanismSpec* spec : mechanism_specs()) {
    EXPECT_TRUE(names.insert(spec->name).second) << "two mechanisms named " << spec->name;
    EXPECT_FALSE(spec->noticed_by.empty()) << spec->name;
    EXPECT_FALSE(spec->source.empty()) << spec->name;
    EXPECT_EQ(find_mechanism(spec->name), spec);
    EXPECT_TRUE(is_known_mechanism(spec->name));
    for (const SignatureLine& line : spec->lines) {
      EXPECT_TRUE(line_ids.insert(line.id).second) << "two lines with the id " << line.id;
      EXPECT_EQ(LineRegex::check(line.regex), std::nullopt) << line.id;
      EXPECT_FALSE(line.shown.empty()) << line.id;
      EXPECT_NE(line.example.find(line.must_contain), std::string_view::npos)
          << line.id << ": its example lacks the literal it must contain";
    }
  }
  EXPECT_EQ(known_mechanisms().size(), mechanism_specs().size());
  EXPECT_EQ(find_mechanism("psychic"), nullptr);
  EXPECT_FALSE(is_known_mechanism("psychic"));
}

// Each line's example, a line as its source prints it, is classified as that line: a new line that a
// mechanism earlier in the list shadows fails here.
TEST(MechanismRegistry, EveryExampleLineIsClassifiedAsItsOwnLine) {
  const LogClassifier classifier = LogClassifier::builtin();
  size_t examples = 0;
  for (const MechanismSpec* spec : mechanism_specs()) {
    for (const SignatureLine& line : spec->lines) {
      ASSERT_FALSE(line.example.empty()) << line.id << " has no example line";
      const auto match = classifier.classify(line.example);
      ASSERT_TRUE(match.has_value()) << line.id << ": its example matched nothing: " << line.example;
      EXPECT_EQ(match->pattern->name, line.id) << line.example;
      EXPECT_EQ(match->pattern->mechanism, spec->name);
      ++examples;
    }
  }
  EXPECT_GE(examples, 19U);
}

TEST(MechanismRegistry, ExitCodesOfTheWorkloadContractMapToTheirMechanisms) {
  EXPECT_EQ(mechanism_for_exit_code(kExitNcclError), "api_error");
  EXPECT_EQ(mechanism_for_exit_code(kExitWatchdog), "workload_watchdog");
  EXPECT_EQ(mechanism_for_exit_code(kExitVerification), "verification");
  EXPECT_EQ(mechanism_for_exit_code(kExitAsyncError), "async_error");
  EXPECT_EQ(mechanism_for_exit_code(kExitBootstrap), "bootstrap");
  EXPECT_EQ(mechanism_for_exit_code(kExitNanLoss), "nan_check");
  EXPECT_EQ(mechanism_for_exit_code(kExitOk), "");
  EXPECT_EQ(mechanism_for_exit_code(kExitUsage), "");
}

TEST(MechanismRegistry, EveryDocAnchorExists) {
  for (const MechanismSpec* spec : mechanism_specs()) {
    const std::string doc(spec->doc);
    const size_t hash = doc.find('#');
    ASSERT_NE(hash, std::string::npos) << spec->name << ": doc must be file.md#anchor, is " << doc;
    const std::string text = read_doc(doc.substr(0, hash));
    ASSERT_FALSE(text.empty()) << spec->name << ": docs/" << doc.substr(0, hash) << " not found";
    EXPECT_TRUE(heading_anchors(text).count(doc.substr(hash + 1)))
        << spec->name << ": no heading with the anchor " << doc;
  }
}

TEST(MechanismRegistry, DocsContainTheTablesVerbatim) {
  const std::string table = mechanism_catalogue_markdown();
  EXPECT_NE(read_doc("outcomes.md").find(table), std::string::npos)
      << "docs/outcomes.md is out of date: run scripts/update-doc-tables (`ncclfi list mechanisms`):\n"
      << table;
  const std::string patterns = builtin_patterns_markdown();
  EXPECT_NE(read_doc("failure-signatures.md").find(patterns), std::string::npos)
      << "docs/failure-signatures.md is out of date: run scripts/update-doc-tables:\n"
      << patterns;
}

}  // namespace
}  // namespace ncclfi::harness
