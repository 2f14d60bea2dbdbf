// Running a class (docs/labs.md, "Running a class"): the class settings (lab_class.cc), rosters
// (lab_roster.cc), the gradebook's CSV and misconception counts (lab_gradebook.cc), the debrief's
// evidence quotes (lab_debrief.cc), and the catalogue's check of wrong-cause feedback (lab_catalogue.cc).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "lab_catalogue.h"
#include "lab_class.h"
#include "lab_debrief.h"
#include "lab_gradebook.h"
#include "lab_roster.h"
#include "unit_temp_dir.h"

namespace ncclfi::cli::lab {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using ncclfi::test_support::TempDir;

// The message of what `f` throws ("" when it does not).
template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(LabClass, Iso8601TimesNeedAZone) {
  EXPECT_EQ(parse_iso8601("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(parse_iso8601("2026-12-04T17:00Z"), parse_iso8601("2026-12-04T18:00+01:00"));
  EXPECT_EQ(parse_iso8601("2026-12-04T17:00:30Z") - parse_iso8601("2026-12-04T17:00:00Z"), 30'000'000'000LL);
  for (const char* bad :
       {"2026-12-04T17:00:00", "2026-12-04", "2026-02-30T10:00Z", "tomorrow", "2026-13-01T00:00Z"})
    EXPECT_NE(error_of([&] { parse_iso8601(bad); }), "") << bad;
}

TEST(LabClass, SettingsAreCheckedFieldByField) {
  const ClassSettings s = class_settings_from_json(
      {{"attempts", 3}, {"deadline", "2026-12-04T17:00:00Z"}, {"wrong_penalty", 20}}, "c.json");
  EXPECT_EQ(s.attempts, 3U);
  EXPECT_EQ(s.wrong_penalty, 20);
  ASSERT_TRUE(s.deadline_ns);
  EXPECT_EQ(past_deadline(s, *s.deadline_ns - 1), "");
  EXPECT_TRUE(has(past_deadline(s, *s.deadline_ns), "deadline (2026-12-04T17:00:00Z) has passed"));
  const ClassSettings defaults = class_settings_from_json(json::object(), "c.json");
  EXPECT_EQ(defaults.attempts, kMaxAttempts);
  EXPECT_EQ(defaults.wrong_penalty, kWrongAttemptPenalty);
  EXPECT_EQ(past_deadline(defaults, INT64_MAX), "");

  const std::string attempts = error_of([] { class_settings_from_json({{"attempts", 0}}, "c.json"); });
  EXPECT_TRUE(has(attempts, "c.json: /attempts: expected a whole number from 1 to 20")) << attempts;
  EXPECT_NE(error_of([] { class_settings_from_json({{"attempts", 21}}, "c.json"); }), "");
  const std::string deadline = error_of([] { class_settings_from_json({{"deadline", "friday"}}, "c.json"); });
  EXPECT_TRUE(has(deadline, "c.json: /deadline: expected an ISO 8601 time")) << deadline;
  const std::string typo = error_of([] { class_settings_from_json({{"attempt", 3}}, "c.json"); });
  EXPECT_TRUE(has(typo, "c.json: /attempt: expected no such setting")) << typo;
  EXPECT_NE(error_of([] { class_settings_from_json({{"wrong_penalty", -1}}, "c.json"); }), "");
}

TEST(LabClass, AClassFileMayBeYamlAndIsKeptInTheKeyDirectory) {
  TempDir dir;
  const std::string file = dir.write("class.yaml", "attempts: 5\ndeadline: 2030-01-01T00:00:00Z\n");
  const ClassSettings s = read_class_file(file);
  EXPECT_EQ(s.attempts, 5U);
  write_class_settings(dir.path + "/keys", s);
  EXPECT_EQ(read_class_settings(dir.path + "/keys").attempts, 5U);
  EXPECT_EQ(read_class_settings(dir.path + "/keys").deadline, "2030-01-01T00:00:00Z");
  EXPECT_EQ(read_class_settings(dir.path + "/none").attempts, kMaxAttempts);  // no file: the defaults
  const std::string bad = dir.write("bad.json", "{\"attempts\": \"five\"}");
  EXPECT_TRUE(has(error_of([&] { read_class_file(bad); }), bad + ": /attempts:"));
}

TEST(LabRoster, OneNameALineOrACsvStudentColumn) {
  TempDir dir;
  EXPECT_EQ(read_roster(dir.write("r.txt", "# course 7\nada\n\ngrace\r\nlinus\n")),
            (std::vector<std::string>{"ada", "grace", "linus"}));
  EXPECT_EQ(read_roster(dir.write("r.csv", "email,student\n\"a@x, y\",ada\nb@x,grace\n")),
            (std::vector<std::string>{"ada", "grace"}));
}

TEST(LabRoster, ABadLineIsNamed) {
  TempDir dir;
  const std::string path = dir.write("r.txt", "ada\n../grace\nlinus\n");
  const std::string error = error_of([&] { read_roster(path); });
  EXPECT_TRUE(has(error, path + ":2: expected a name")) << error;
  const std::string twice = dir.write("twice.txt", "ada\nada\n");
  EXPECT_TRUE(has(error_of([&] { read_roster(twice); }), twice + ":2: ada is on the roster twice"));
  const std::string no_column = dir.write("c.csv", "email,name\na,ada\n");
  EXPECT_TRUE(has(error_of([&] { read_roster(no_column); }), no_column + ":1:"));
  EXPECT_NE(error_of([&] { read_roster(dir.write("empty.txt", "\n# nobody\n")); }), "");
  EXPECT_EQ(split_csv_record("a,\"b \"\"c\"\", d\",e"), (std::vector<std::string>{"a", "b \"c\", d", "e"}));
}

json row(const std::string& student, const std::string& progress, json wrong = json::array()) {
  return {{"student", student},
          {"lab", "nic-failure"},
          {"variant", 2},
          {"attempts", 3},
          {"hints", 1},
          {"first_score", 0},
          {"best_score", 60},
          {"score", 60},
          {"right", true},
          {"time_to_answer_s", 12.34},
          {"progress", progress},
          {"wrong_causes", wrong},
          {"workspace_state", "ok"}};
}

TEST(LabGradebook, CsvRowsAreQuotedAndUnverifiedOnesCountNothing) {
  const std::string csv = gradebook_csv({row("ada", "ok"), row("o\"brien, jr", "tampered")});
  std::istringstream lines(csv);
  std::string header, ada, obrien;
  std::getline(lines, header);
  std::getline(lines, ada);
  std::getline(lines, obrien);
  EXPECT_EQ(header, kGradebookHeader);
  EXPECT_EQ(ada, "ada,nic-failure,2,3,1,0,60,60,yes,12.3,ok,ok");
  EXPECT_EQ(obrien, "\"o\"\"brien, jr\",nic-failure,2,,,,,,,,tampered,ok");
  EXPECT_EQ(csv_field("a\nb"), "\"a\nb\"");
}

TEST(LabGradebook, TheMisconceptionHistogramCountsVerifiedWrongCauses) {
  const json h =
      misconception_histogram({row("ada", "ok", {"dead_rank", "hung_rank", "dead_rank"}),
                               row("grace", "ok", {"dead_rank"}), row("eve", "tampered", {"congestion"})});
  ASSERT_EQ(h.size(), 2U) << h.dump();
  EXPECT_EQ(h[0], (json{{"lab", "nic-failure"}, {"cause", "dead_rank"}, {"count", 3}}));
  EXPECT_EQ(h[1]["cause"], "hung_rank");
  EXPECT_EQ(misconception_csv(h), "lab,cause,count\nnic-failure,dead_rank,3\nnic-failure,hung_rank,1\n");
}

TEST(LabDebrief, EvidenceEntriesFindTheirLinesInTheWorkspace) {
  TempDir ws;
  ws.write("training/rank-0.log", "step 1 loss 2.0\nNCCL INFO ring 0\nstep 2 loss 1.9\n");
  ws.write("training/rank-2.log",
           "step 1 loss 2.0\nvm:12:12 [0] NCCL WARN net plugin call connect failed (ncclSystemError)\n");
  ws.write(
      "training/exit_codes.txt",
      "rank 0: exit code 1, 3.2 s after the job started\nrank 2: killed by signal 9, 1.1 s after the job "
      "started\n");
  auto quotes =
      find_evidence(ws.path, "training/rank-2.log: net plugin call connect failed (ncclSystemError)");
  ASSERT_EQ(quotes.size(), 1U);
  EXPECT_EQ(quotes[0].file, "training/rank-2.log");
  EXPECT_EQ(quotes[0].line, 2);
  quotes = find_evidence(ws.path, "training/exit_codes.txt: rank 2 was killed by signal 9 first");
  ASSERT_FALSE(quotes.empty());
  EXPECT_EQ(quotes[0].line, 2) << quotes[0].text;
  // A glob, and an entry with no file: every job's file is searched.
  quotes = find_evidence(ws.path, "training/rank-*.log: the first error, ncclSystemError");
  ASSERT_FALSE(quotes.empty());
  EXPECT_EQ(quotes[0].file, "training/rank-2.log");
  EXPECT_FALSE(find_evidence(ws.path, "the rank printed ncclSystemError").empty());
  // The rank an entry names is what to look for: the link test's line of that rank's link.
  ws.write("link-test/rank-2.log",
           "    rank 1 -> rank 2        33.5          39.1       30\ncpu-ring: verified\n");
  quotes = find_evidence(ws.path, "link-test/rank-2.log: only the link into rank 2 delivers wrong elements");
  ASSERT_EQ(quotes.size(), 1U);
  EXPECT_EQ(quotes[0].line, 1);
  // Nothing that matches too little is quoted.
  EXPECT_TRUE(find_evidence(ws.path, "training/rank-0.log: ends mid-training with no error").empty());
}

TEST(LabDebrief, TheAnswerIsFinalWhenRightOutOfAttemptsOrPastTheDeadline) {
  ClassSettings s;
  s.attempts = 2;
  const json wrong = {{"cause", "hung_rank"}, {"grade", {{"right", false}, {"score", 0}}}};
  const json right = {{"cause", "nic"}, {"grade", {{"right", true}, {"score", 85}}}};
  EXPECT_EQ(final_answer_reason({{"attempts", json::array()}}, s, 0), "");
  EXPECT_EQ(final_answer_reason({{"attempts", {wrong}}}, s, 0), "");
  EXPECT_TRUE(has(final_answer_reason({{"attempts", {wrong, right}}}, s, 0), "right at attempt 2"));
  EXPECT_TRUE(has(final_answer_reason({{"attempts", {wrong, wrong}}}, s, 0), "all 2 attempts"));
  s.deadline_ns = 1000;
  s.deadline = "1970-01-01T00:00:00Z";
  EXPECT_TRUE(has(final_answer_reason({{"attempts", json::array()}}, s, 1000), "deadline"));
}

// A lab whose feedback for a wrong cause describes its answer does not load.
TEST(LabCatalogue, FeedbackThatDescribesTheAnswerIsRefusedAtLoad) {
  TempDir dir;
  std::ifstream in(NCCLFI_SOURCE_DIR "/scenarios/labs/job-died.json");
  json lab = json::parse(in);
  bool changed = false;
  for (json& cause : lab["causes"]) {
    if (cause["answer"]["cause"] != "nic") continue;
    cause["answer"]["misconceptions"]["dead_rank"] = "no: the NIC of that node failed";
    changed = true;
  }
  ASSERT_TRUE(changed) << "job-died.json has no nic cause";
  dir.write("labs/job-died.json", lab.dump());
  const std::string error = error_of([&] { load_lab_catalogue(dir.path + "/labs"); });
  EXPECT_TRUE(has(error, "/answer/misconceptions/dead_rank")) << error;
  EXPECT_TRUE(has(error, "\"nic\"")) << error;
}

}  // namespace
}  // namespace ncclfi::cli::lab
