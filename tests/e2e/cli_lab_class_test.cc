// Running a class with `ncclfi lab` (docs/labs.md, "Running a class"): the class settings (an attempt
// cap, a deadline, the wrong-answer penalty), rosters, the gradebook from the key directory alone with
// its misconception counts, and the student's own debrief. As in cli_lab_progress_test.cc, the lab is
// a one-line shell job of the test's own, so nothing but the lab commands is under test.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_process.h"
#include "lab_fixture.h"

namespace ncclfi::e2e {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

class LabClass : public LabCourse {
 protected:
  CliResult start(const std::string& student, std::vector<std::string> more = {}) {
    std::vector<std::string> args = {"lab",       "start",     "tiny", "--student",   student,   "--dir",
                                     ws(student), "--key-dir", keys_,  "--catalogue", catalogue_};
    args.insert(args.end(), more.begin(), more.end());
    return run_cli(args);
  }
  std::string ws(const std::string& student) const { return dir_.path + "/ws-" + student; }
  std::string progress_of(const std::string& workspace) {
    return keys_ + "/" + read_json(workspace + "/lab.json").at("ticket").get<std::string>() +
           "/progress.json";
  }
  CliResult answer(const std::string& workspace, const std::string& rank, const std::string& cause) {
    return run_cli({"lab", "answer", workspace, "--rank", rank, "--cause", cause});
  }
  CliResult class_init(std::vector<std::string> more) {
    std::vector<std::string> args = {"lab", "class", "init", "--key-dir", keys_};
    args.insert(args.end(), more.begin(), more.end());
    return run_cli(args);
  }
};

TEST_F(LabClass, BlindGuessesCostPointsAndTheClassCapsAttempts) {
  const auto init = class_init({"--attempts", "4", "--wrong-penalty", "20"});
  ASSERT_EQ(init.exit_code, 0) << init.out << init.err;
  ASSERT_EQ(start("ada").exit_code, 0);
  for (const char* cause : {"hung_rank", "dead_rank", "congestion"})
    EXPECT_EQ(answer(ws("ada"), "1", cause).exit_code, 1);
  const auto right = answer(ws("ada"), "1", "nic");
  EXPECT_EQ(right.exit_code, 0) << right.out << right.err;
  EXPECT_TRUE(contains(right.out, "RIGHT: score 40/100 (attempt 4, hints used 0)")) << right.out;
  EXPECT_TRUE(contains(right.out, "-60 points for 3 wrong attempt(s) before this one")) << right.out;
  const std::string kept = read_text(progress_of(ws("ada")));
  const auto refused = answer(ws("ada"), "1", "nic");
  EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
  EXPECT_TRUE(contains(refused.err, "no attempts left: 4 answers")) << refused.err;
  EXPECT_EQ(read_text(progress_of(ws("ada"))), kept);
  const auto book = run_cli({"lab", "gradebook", "--key-dir", keys_});
  EXPECT_EQ(row_of(book.out, "ada").rfind("ada,tiny,0,4,0,50,50,40,yes,", 0), 0U) << book.out;
}

TEST_F(LabClass, AfterTheDeadlineAnswerAndHintAreRefusedAndRecordNothing) {
  ASSERT_EQ(class_init({"--deadline", "2000-01-01T00:00:00Z"}).exit_code, 0);
  ASSERT_EQ(start("ada").exit_code, 0);
  const std::string before = read_text(progress_of(ws("ada")));
  const auto late = answer(ws("ada"), "1", "nic");
  EXPECT_EQ(late.exit_code, 2) << late.out << late.err;
  EXPECT_TRUE(contains(late.err, "the deadline (2000-01-01T00:00:00Z) has passed")) << late.err;
  const auto hint = run_cli({"lab", "hint", ws("ada")});
  EXPECT_EQ(hint.exit_code, 2) << hint.out << hint.err;
  EXPECT_EQ(read_text(progress_of(ws("ada"))), before);
  // Past the deadline the answer is final: the debrief is the student's.
  const auto debrief = run_cli({"lab", "debrief", ws("ada")});
  EXPECT_EQ(debrief.exit_code, 0) << debrief.out << debrief.err;
  EXPECT_TRUE(contains(debrief.out, "the deadline (2000-01-01T00:00:00Z) has passed")) << debrief.out;
}

TEST_F(LabClass, ABadClassFileIsRefusedBeforeAnythingStarts) {
  const std::string file = dir_.path + "/class.json";
  std::ofstream(file) << R"({"attempts": 3, "deadline": "next friday"})";
  const auto r = start("ada", {"--class", file});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(contains(r.err, file + ": /deadline: expected an ISO 8601 time")) << r.err;
  EXPECT_FALSE(fs::exists(ws("ada")));
  EXPECT_FALSE(fs::exists(keys_ + "/class.json"));
  std::ofstream(file) << R"({"attempts": 1})";
  ASSERT_EQ(start("ada", {"--class", file}).exit_code, 0);
  EXPECT_EQ(read_json(keys_ + "/class.json").at("attempts"), 1);
  EXPECT_EQ(answer(ws("ada"), "0", "hung_rank").exit_code, 1);
  EXPECT_EQ(answer(ws("ada"), "1", "nic").exit_code, 2);  // one attempt, spent
}

TEST_F(LabClass, ARosterStartsEveryStudentAndReportsTheOneThatFails) {
  const std::string roster = dir_.path + "/roster.csv";
  std::ofstream(roster) << "email,student\nada@uni,ada\nbob@uni,bob\ngrace@uni,grace\n";
  const std::string dir = dir_.path + "/class";
  fs::create_directories(dir + "/bob");
  std::ofstream(dir + "/bob/notes.txt") << "bob's own files";  // bob's start must not overwrite them
  const auto r = run_cli({"lab", "start", "tiny", "--roster", roster, "--dir", dir, "--key-dir", keys_,
                          "--catalogue", catalogue_});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "roster: 2 of 3 started; not started: bob")) << r.out;
  EXPECT_TRUE(contains(r.err, "bob: not started:")) << r.err;
  EXPECT_TRUE(fs::exists(dir + "/ada/lab.json"));
  EXPECT_TRUE(fs::exists(dir + "/grace/lab.json"));
  EXPECT_FALSE(fs::exists(dir + "/bob/lab.json"));
  EXPECT_EQ(read_json(dir + "/grace/lab.json").at("student"), "grace");
}

TEST_F(LabClass, ABadRosterLineIsNamedAndNobodyStarts) {
  const std::string roster = dir_.path + "/roster.txt";
  std::ofstream(roster) << "ada\ngrace\n../eve\n";
  const std::string dir = dir_.path + "/class";
  const auto r = run_cli({"lab", "start", "tiny", "--roster", roster, "--dir", dir, "--key-dir", keys_,
                          "--catalogue", catalogue_});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(contains(r.err, roster + ":3: expected a name")) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/ada"));
}

TEST_F(LabClass, TheGradebookNeedsOnlyTheKeyDirectory) {
  ASSERT_EQ(start("ada").exit_code, 0);
  ASSERT_EQ(start("grace").exit_code, 0);
  ASSERT_EQ(start("linus").exit_code, 0);
  EXPECT_EQ(answer(ws("ada"), "0", "hung_rank").exit_code, 1);
  EXPECT_EQ(answer(ws("ada"), "1", "nic").exit_code, 0);
  EXPECT_EQ(answer(ws("grace"), "1", "hung_rank").exit_code, 1);
  EXPECT_EQ(answer(ws("grace"), "1", "dead_rank").exit_code, 1);
  fs::remove_all(ws("grace"));  // gone: her row still counts, from the key directory
  const auto book = run_cli({"lab", "gradebook", "--key-dir", keys_});
  EXPECT_EQ(book.exit_code, 0) << book.out << book.err;
  EXPECT_EQ(row_of(book.out, "ada").rfind("ada,tiny,0,2,0,0,85,85,yes,", 0), 0U) << book.out;
  EXPECT_TRUE(contains(row_of(book.out, "ada"), ",ok,ok")) << book.out;
  EXPECT_EQ(row_of(book.out, "grace"), "grace,tiny,0,2,0,50,50,50,no,,ok,missing") << book.out;
  EXPECT_EQ(row_of(book.out, "linus"), "linus,tiny,0,0,0,,0,0,no,,ok,ok") << book.out;
  EXPECT_TRUE(contains(book.err, "warning:")) << book.err;
  EXPECT_TRUE(contains(book.err, ws("grace"))) << book.err;
  const auto counts = run_cli({"lab", "gradebook", "--key-dir", keys_, "--misconceptions"});
  EXPECT_EQ(counts.exit_code, 0) << counts.err;
  EXPECT_EQ(counts.out, "lab,cause,count\ntiny,hung_rank,2\ntiny,dead_rank,1\n");
  const auto as_json = run_cli({"lab", "gradebook", "--key-dir", keys_, "--json"});
  EXPECT_EQ(json::parse(as_json.out).size(), 3U) << as_json.out;
}

TEST_F(LabClass, TheStudentsDebriefComesAfterTheAnswerAndQuotesTheirWorkspace) {
  ASSERT_EQ(start("ada").exit_code, 0);
  const auto early = run_cli({"lab", "debrief", ws("ada")});
  EXPECT_EQ(early.exit_code, 2) << early.out << early.err;
  EXPECT_TRUE(contains(early.err, "answer first")) << early.err;
  EXPECT_EQ(early.out, "");
  EXPECT_EQ(answer(ws("ada"), "1", "hung_rank").exit_code, 1);
  EXPECT_EQ(run_cli({"lab", "debrief", ws("ada")}).exit_code, 2);  // a wrong answer is not final
  EXPECT_EQ(answer(ws("ada"), "1", "nic").exit_code, 0);
  const auto debrief = run_cli({"lab", "debrief", ws("ada")});
  EXPECT_EQ(debrief.exit_code, 0) << debrief.out << debrief.err;
  EXPECT_TRUE(contains(debrief.out, "you answered right at attempt 2")) << debrief.out;
  EXPECT_TRUE(contains(debrief.out, "training/rank-1.log:2: NET/IB: port error on mlx5_0:1")) << debrief.out;
  EXPECT_TRUE(contains(debrief.out, "hung_rank: a hung rank stops printing steps")) << debrief.out;
}

}  // namespace
}  // namespace ncclfi::e2e
