// No library exception reaches a user: `ncclfi report` on a verdict.json with a field of the wrong type
// or a field missing says the file, the field and what was expected, exits 2 (bad input) and writes
// nothing; the library's own text ("[json.exception.type_error.302] type must be string, but is number")
// names neither.
#include <gtest/gtest.h>

#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "json_field_error.h"
#include "unit_temp_dir.h"

namespace ncclfi::harness {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using ncclfi::test_support::TempDir;

struct CliResult {
  int exit_code = -1;
  std::string output;
};

CliResult run_cli(const std::string& args) {
  const std::string command = std::string(NCCLFI_CLI) + " " + args + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  CliResult r;
  if (pipe == nullptr) return r;
  char buf[512];
  size_t n = 0;
  while ((n = ::fread(buf, 1, sizeof buf, pipe)) > 0) r.output.append(buf, n);
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

json good_verdict() {
  return {{"scenario", "edited"},
          {"judgement", {{"verdict", "pass"}, {"restarts", 0}}},
          {"history",
           {{"world_size", 2},
            {"events",
             {{{"event", "step"}, {"source", "workload"}, {"rank", 0}, {"ts_ns", 1}},
              {{"event", "step"}, {"source", "workload"}, {"rank", 1}, {"ts_ns", 2}}}}}}};
}

// Before: "harness error: .../verdict.json: unreadable verdict: [json.exception.type_error.302] type must
// be string, but is number", exit 3, and the reports written anyway.
TEST(CliErrors, ReportOnAnEditedVerdictNamesTheFileAndTheField) {
  struct Case {
    std::string pointer;
    json value;  // null: the field removed
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"/scenario", 5, "/scenario: expected a string, got a number"},
      {"/scenario", nullptr, "/scenario: missing"},
      {"/judgement/restarts", "two", "/judgement/restarts: expected a number, got a string"},
      {"/history/events/1/rank", "one", "/history/events/1/rank: expected a number, got a string"},
  };
  for (const Case& c : cases) {
    TempDir dir;
    json doc = good_verdict();
    if (c.value.is_null()) {
      doc.erase(c.pointer.substr(1));
    } else {
      doc[json::json_pointer(c.pointer)] = c.value;
    }
    std::ofstream(dir.path + "/verdict.json") << doc.dump();
    const CliResult r = run_cli("report " + dir.path);
    EXPECT_EQ(r.exit_code, 2) << c.pointer << ": " << r.output;
    EXPECT_NE(r.output.find(dir.path + "/verdict.json: " + c.expected), std::string::npos)
        << c.pointer << ": " << r.output;
    EXPECT_EQ(r.output.find("json.exception"), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(dir.path + "/report.html")) << "reports written from bad input";
  }
  TempDir dir;
  std::ofstream(dir.path + "/verdict.json") << good_verdict().dump();
  EXPECT_EQ(run_cli("report " + dir.path).exit_code, 0) << "the unedited verdict is read";
}

// A suite directory's summary.json is read the same way (before: the library's text, exit 3).
TEST(CliErrors, ReportOnAnEditedSuiteSummaryNamesTheFileAndTheField) {
  TempDir dir;
  std::ofstream(dir.path + "/summary.json") << R"({"runs": [{"status": "skipped", "tags": ["a", 1]}]})";
  const CliResult r = run_cli("report " + dir.path);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(dir.path + "/summary.json: /runs/0/tags/1: expected a string, got a number"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("json.exception"), std::string::npos) << r.output;
}

// Before: a student's hand-edited progress.json ended `lab hint` and `lab answer` with "ncclfi lab:
// [json.exception.type_error.302] type must be number, but is string". Progress is signed now: a
// hand-edited one, whatever its types, is refused as unsigned, naming the file, and left as it is.
TEST(CliErrors, ALabProgressOfTheWrongTypesNamesTheFile) {
  TempDir dir;
  const std::string ws = dir.path + "/ws", keys = dir.path + "/keys";
  const CliResult started =
      run_cli("lab start job-died --student amy --catalogue " + std::string(NCCLFI_SOURCE_DIR) +
              "/scenarios/labs --dir " + ws + " --key-dir " + keys);
  ASSERT_EQ(started.exit_code, 0) << started.output;
  std::string progress;
  for (const auto& entry : fs::recursive_directory_iterator(keys))
    if (entry.path().filename() == "progress.json") progress = entry.path().string();
  ASSERT_FALSE(progress.empty());
  std::ofstream(progress) << R"({"hints_used": "two", "attempts": []})";
  const CliResult hint = run_cli("lab hint " + ws);
  EXPECT_EQ(hint.exit_code, 2) << hint.output;
  EXPECT_NE(hint.output.find(progress + ": not signed"), std::string::npos) << hint.output;
  std::ofstream(progress) << R"({"hints_used": 0, "attempts": {"a": 1}})";
  const CliResult answer = run_cli("lab answer " + ws + " --cause remote_error --rank 1");
  EXPECT_EQ(answer.exit_code, 2) << answer.output;
  EXPECT_NE(answer.output.find(progress + ": not signed"), std::string::npos) << answer.output;
  for (const auto& text : {hint.output, answer.output})
    EXPECT_EQ(text.find("json.exception"), std::string::npos);
}

// The locator finds the field whatever reader threw, and leaves the library's text behind.
TEST(CliErrors, TheFieldIsFoundByWhatTheReaderTakes) {
  const JsonReader read = [](const json& doc) {
    for (const auto& item : doc.at("items")) (void)item.at("n").get<int>();
  };
  const json doc = {{"items", {{{"n", 1}}, {{"n", 2}, {"m", 3}}, {{"n", {1}}}}}, {"other", true}};
  try {
    read(doc);
    FAIL() << "the reader took a wrong type";
  } catch (const std::exception& e) {
    EXPECT_EQ(json_field_error("f.json", doc, read, e),
              "f.json: /items/2/n: expected a number, got an array");
  }
  const json missing = {{"items", {{{"n", 1}}, {{"m", 3}}}}};
  try {
    read(missing);
    FAIL() << "the reader took a missing field";
  } catch (const std::exception& e) {
    EXPECT_EQ(json_field_error("f.json", missing, read, e), "f.json: /items/1/n: missing");
  }
}

}  // namespace
}  // namespace ncclfi::harness
