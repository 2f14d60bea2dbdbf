// A student's lab progress cannot be forged, erased or spent by another student: every progress.json is
// signed under the key directory's secret for its own ticket (docs/labs-instructor.md, "What the signature
// protects"). A hand-edited, copied or bloated file is refused by `hint` and `answer` and left on disk
// as it is, and the gradebook marks that student's row instead of counting it. The labs here run a
// one-line shell job (a catalogue of the test's own), so nothing but the lab commands is under test.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_process.h"
#include "lab_fixture.h"

namespace ncclfi::e2e {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// A course: the catalogue, the key directory, and students' workspaces, all under one temporary
// directory.
class LabProgress : public LabCourse {
 protected:
  // Starts the lab for `student`; returns the workspace.
  std::string start(const std::string& student) {
    const std::string ws = dir_.path + "/ws-" + student;
    const auto r = run_cli({"lab", "start", "tiny", "--student", student, "--dir", ws, "--key-dir", keys_,
                            "--catalogue", catalogue_});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    return ws;
  }
  std::string ticket_dir(const std::string& ws) {
    return keys_ + "/" + read_json(ws + "/lab.json").at("ticket").get<std::string>();
  }
  std::string progress_of(const std::string& ws) { return ticket_dir(ws) + "/progress.json"; }

  CliResult answer(const std::string& ws, const std::string& rank, const std::string& cause) {
    return run_cli({"lab", "answer", ws, "--rank", rank, "--cause", cause});
  }
  CliResult gradebook(const std::vector<std::string>& workspaces) {
    std::vector<std::string> args = {"lab", "gradebook", "--key-dir", keys_};
    args.insert(args.end(), workspaces.begin(), workspaces.end());
    return run_cli(args);
  }
};

TEST_F(LabProgress, HintAnswerAndGradebookStillWorkAndTheProgressIsSigned) {
  const std::string ws = start("ada");
  EXPECT_EQ(answer(ws, "0", "hung_rank").exit_code, 1);
  const auto hint = run_cli({"lab", "hint", ws});
  EXPECT_EQ(hint.exit_code, 0) << hint.err;
  EXPECT_TRUE(contains(hint.out, "hint 1 of 2")) << hint.out;
  const auto right = answer(ws, "1", "nic");
  EXPECT_EQ(right.exit_code, 0) << right.out << right.err;
  // The wrong attempt before it costs points too.
  EXPECT_TRUE(contains(right.out, "RIGHT: score 75/100 (attempt 2, hints used 1)")) << right.out;
  const json progress = read_json(progress_of(ws));
  EXPECT_EQ(progress.at("student"), "ada");
  EXPECT_EQ(progress.at("mac").get<std::string>().size(), 64U) << progress.dump();
  const auto book = gradebook({ws});
  EXPECT_EQ(book.exit_code, 0) << book.err;
  EXPECT_TRUE(
      contains(book.out,
               "student,lab,variant,attempts,hints,first_score,best_score,score,right,time_to_answer_s,"
               "progress,workspace\n"))
      << book.out;
  const std::string row = row_of(book.out, "ada");
  EXPECT_EQ(row.rfind("ada,tiny,0,2,1,0,75,75,yes,", 0), 0U) << book.out;
  EXPECT_TRUE(contains(row, ",ok,ok")) << row;
}

TEST_F(LabProgress, TheKeyDirectoryAndItsSecretArePrivate) {
  const std::string ws = start("ada");
  auto mode = [](const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
    return st.st_mode & 07777;
  };
  EXPECT_EQ(mode(keys_), 0700U);
  EXPECT_EQ(mode(ticket_dir(ws)), 0700U);
  EXPECT_EQ(mode(keys_ + "/progress-secret"), 0600U);
  // Made once: a second student's start keeps the first secret (or the first one's progress would no
  // longer verify).
  const std::string secret = read_text(keys_ + "/progress-secret");
  const std::string ws_b = start("grace");
  EXPECT_EQ(read_text(keys_ + "/progress-secret"), secret);
  EXPECT_EQ(run_cli({"lab", "hint", ws}).exit_code, 0);
  EXPECT_EQ(run_cli({"lab", "hint", ws_b}).exit_code, 0);
}

TEST_F(LabProgress, AHandEditedRightAnswerIsTamperedAndAnswerRefusesIt) {
  const std::string ws = start("ada");
  const std::string ws_b = start("grace");
  EXPECT_EQ(answer(ws, "0", "hung_rank").exit_code, 1);
  EXPECT_EQ(answer(ws_b, "1", "nic").exit_code, 0);
  // The forgery: the wrong attempt made right, for 100 points.
  const std::string file = progress_of(ws);
  json forged = read_json(file);
  forged["attempts"][0]["grade"]["right"] = true;
  forged["attempts"][0]["grade"]["score"] = 100;
  std::ofstream(file) << forged.dump(2);
  const std::string evidence = read_text(file);

  const auto book = gradebook({ws, ws_b});
  EXPECT_EQ(book.exit_code, 1) << book.out << book.err;
  const std::string row = row_of(book.out, "ada");
  EXPECT_TRUE(contains(row, "tampered")) << book.out;
  EXPECT_FALSE(contains(row, "100")) << row;
  EXPECT_FALSE(contains(row, "yes")) << row;
  EXPECT_TRUE(contains(book.err, file)) << book.err;
  EXPECT_EQ(row_of(book.out, "grace").rfind("grace,tiny,0,1,0,100,100,100,yes,", 0), 0U) << book.out;

  const auto refused = answer(ws, "1", "nic");
  EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
  EXPECT_TRUE(contains(refused.err, file)) << refused.err;
  EXPECT_TRUE(contains(refused.err, "signature")) << refused.err;
  const auto hint = run_cli({"lab", "hint", ws});
  EXPECT_EQ(hint.exit_code, 2) << hint.out << hint.err;
  EXPECT_EQ(read_text(file), evidence) << "the tampered file is kept as it is";
  // Erasing the attempts (deleting the file) is no way out either.
  fs::remove(file);
  EXPECT_EQ(answer(ws, "1", "nic").exit_code, 2);
  EXPECT_FALSE(fs::exists(file));
  EXPECT_TRUE(contains(row_of(gradebook({ws}).out, "ada"), "missing"));
}

TEST_F(LabProgress, AnotherStudentsProgressCopiedOverIsRefused) {
  const std::string ws = start("ada");
  const std::string ws_b = start("grace");
  EXPECT_EQ(answer(ws_b, "1", "nic").exit_code, 0);  // grace's right answer, signed for grace
  fs::copy_file(progress_of(ws_b), progress_of(ws), fs::copy_options::overwrite_existing);
  const std::string copied = read_text(progress_of(ws));

  const auto refused = answer(ws, "1", "nic");
  EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
  EXPECT_TRUE(contains(refused.err, progress_of(ws))) << refused.err;
  EXPECT_TRUE(contains(refused.err, "another ticket")) << refused.err;
  const auto book = gradebook({ws, ws_b});
  EXPECT_TRUE(contains(row_of(book.out, "ada"), "tampered")) << book.out;
  EXPECT_FALSE(contains(row_of(book.out, "ada"), "yes")) << book.out;
  EXPECT_EQ(read_text(progress_of(ws)), copied);
}

TEST_F(LabProgress, AWorkspacePointedAtAnotherStudentsTicketIsRefused) {
  const std::string ws = start("ada");
  const std::string ws_b = start("grace");
  const std::string graces = read_text(progress_of(ws_b));
  json ticket = read_json(ws + "/lab.json");
  ticket["ticket"] = read_json(ws_b + "/lab.json").at("ticket");
  std::ofstream(ws + "/lab.json") << ticket.dump(2);
  // Ada's workspace now names grace's ticket: her hints and answers must not be grace's.
  const auto hint = run_cli({"lab", "hint", ws});
  EXPECT_EQ(hint.exit_code, 2) << hint.out << hint.err;
  EXPECT_TRUE(contains(hint.err, "acts only on its own ticket")) << hint.err;
  // Claiming to be grace as well: still not grace's workspace.
  ticket["student"] = "grace";
  std::ofstream(ws + "/lab.json") << ticket.dump(2);
  const auto as_grace = answer(ws, "1", "nic");
  EXPECT_EQ(as_grace.exit_code, 2) << as_grace.out << as_grace.err;
  EXPECT_TRUE(contains(as_grace.err, "acts only on its own ticket")) << as_grace.err;
  EXPECT_EQ(read_text(progress_of(ws_b)), graces) << "grace's progress was spent";
  // A ticket id that is a path is not one.
  ticket["ticket"] = "../keys/" + ticket["ticket"].get<std::string>();
  std::ofstream(ws + "/lab.json") << ticket.dump(2);
  EXPECT_EQ(run_cli({"lab", "hint", ws}).exit_code, 2);
  EXPECT_EQ(read_text(progress_of(ws_b)), graces);
}

TEST_F(LabProgress, ABloatedProgressIsRefusedAndKept) {
  const std::string ws = start("ada");
  EXPECT_EQ(answer(ws, "0", "hung_rank").exit_code, 1);
  // Past every read limit (today's 16 MiB too): once, that was a way to have the attempts forgotten.
  const std::string file = progress_of(ws);
  json doc = read_json(file);
  doc["padding"] = std::string(17 << 20, 'x');
  std::ofstream(file) << doc.dump();
  const std::string bloated = read_text(file);
  const auto hint = run_cli({"lab", "hint", ws});
  EXPECT_EQ(hint.exit_code, 2) << hint.out << hint.err;
  EXPECT_TRUE(contains(hint.err, file)) << hint.err;
  EXPECT_EQ(answer(ws, "1", "nic").exit_code, 2);
  EXPECT_TRUE(read_text(file) == bloated) << "the bloated file was replaced";
  EXPECT_TRUE(contains(row_of(gradebook({ws}).out, "ada"), "too-large"));
}

// Answers given at once each count: none is dropped by another written over it (which was a way past
// the cap, and out of the record).
TEST_F(LabProgress, AnswersAtOnceAreAllKept) {
  const std::string ws = start("ada");
  constexpr int kAtOnce = 8;
  std::vector<pid_t> pids;
  for (int i = 0; i < kAtOnce; ++i) {
    pids.push_back(start_cli({"lab", "answer", ws, "--rank", std::to_string(i), "--cause", "hung_rank"},
                             dir_.path + "/answer-" + std::to_string(i) + ".out"));
  }
  for (const pid_t pid : pids) {
    const int status = wait_pid(pid, 60);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << "status " << status;
  }
  EXPECT_EQ(read_json(progress_of(ws)).at("attempts").size(), static_cast<size_t>(kAtOnce));
  EXPECT_EQ(run_cli({"lab", "hint", ws}).exit_code, 0) << "the progress still verifies";
}

TEST_F(LabProgress, AttemptsAreCapped) {
  const std::string ws = start("ada");
  for (int i = 0; i < 20; ++i) ASSERT_EQ(answer(ws, "0", "hung_rank").exit_code, 1) << "attempt " << i + 1;
  const std::string kept = read_text(progress_of(ws));
  const auto refused = answer(ws, "1", "nic");
  EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
  EXPECT_TRUE(contains(refused.err, "no attempts left")) << refused.err;
  EXPECT_EQ(read_text(progress_of(ws)), kept);
}

}  // namespace
}  // namespace ncclfi::e2e
