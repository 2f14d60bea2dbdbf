// A lab's progress file against a student who edits it (harness/apps/labs/lab_progress.cc): only what
// was signed under the key directory's secret, for this very ticket, verifies; what does not is left
// on disk as it was. The e2e tests (tests/e2e/cli_lab_progress_test.cc) drive the same through `ncclfi lab`.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "lab_key_dir.h"
#include "lab_progress.h"
#include "unit_temp_dir.h"

namespace ncclfi::cli::lab {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using ncclfi::test_support::TempDir;

std::string text_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

const ProgressOwner kAda{"nic-failure", "ada", "00000000000000aa"};
const ProgressOwner kGrace{"nic-failure", "grace", "00000000000000bb"};

json one_attempt(int score, bool right) {
  return {{"ts_ns", 1}, {"cause", "nic"}, {"grade", {{"right", right}, {"score", score}}}};
}

class LabProgressFile : public ::testing::Test {
 protected:
  void SetUp() override {
    secret_ = make_or_read_secret(dir_.path);
    ticket_ = dir_.path + "/" + kAda.ticket_id;
    make_private_directory(ticket_);
    json doc = new_progress(kAda);
    doc["attempts"].push_back(one_attempt(40, false));
    write_progress(ticket_, kAda, doc, secret_);
  }
  std::string file() const { return ticket_ + "/progress.json"; }
  // The file with `edit` applied to its JSON, the signature left as it was.
  void edit(const std::function<void(json&)>& change) {
    json doc = json::parse(text_of(file()));
    change(doc);
    std::ofstream(file()) << doc.dump(2);
  }

  TempDir dir_;
  std::string secret_, ticket_;
};

TEST_F(LabProgressFile, WhatWasWrittenVerifies) {
  const ProgressRead read = read_progress(ticket_, kAda, secret_);
  ASSERT_TRUE(read.verified()) << read.problem;
  EXPECT_EQ(read.doc["attempts"].size(), 1U);
  EXPECT_EQ(read.doc["student"], "ada");
}

TEST_F(LabProgressFile, AnyEditIsTamperedAndTheFileIsKept) {
  const std::vector<std::function<void(json&)>> edits = {
      [](json& d) { d["attempts"][0]["grade"]["score"] = 100; },
      [](json& d) { d["attempts"][0]["grade"]["right"] = true; },
      [](json& d) { d["attempts"] = json::array(); },
      [](json& d) { d["hints_used"] = -1; },
      [](json& d) { d["student"] = "grace"; },
      [](json& d) { d["ticket"] = 5; },  // of another type: refused, not thrown
      [](json& d) { d.erase("mac"); },
  };
  for (size_t i = 0; i < edits.size(); ++i) {
    SetUp();
    edit(edits[i]);
    const std::string before = text_of(file());
    const ProgressRead read = read_progress(ticket_, kAda, secret_);
    EXPECT_EQ(read.state, ProgressState::kTampered) << "edit " << i;
    EXPECT_NE(read.problem.find(file()), std::string::npos) << read.problem;
    EXPECT_THROW(read_verified_progress(ticket_, kAda, secret_), std::runtime_error) << "edit " << i;
    EXPECT_EQ(text_of(file()), before) << "edit " << i;
  }
}

TEST_F(LabProgressFile, AnotherTicketsSignedProgressIsNotThisTicketsProgress) {
  json graces = new_progress(kGrace);
  graces["attempts"].push_back(one_attempt(100, true));
  write_progress(ticket_, kGrace, graces, secret_);  // signed, but for grace
  const ProgressRead read = read_progress(ticket_, kAda, secret_);
  EXPECT_EQ(read.state, ProgressState::kTampered);
  EXPECT_NE(read.problem.find("another ticket"), std::string::npos) << read.problem;
}

TEST_F(LabProgressFile, ASignatureUnderAnotherSecretIsTampered) {
  EXPECT_EQ(read_progress(ticket_, kAda, std::string(64, 'f')).state, ProgressState::kTampered);
}

TEST_F(LabProgressFile, AttemptsAndSizeAreBoundedAndARefusedWriteChangesNothing) {
  const std::string before = text_of(file());
  json doc = read_verified_progress(ticket_, kAda, secret_);
  while (doc["attempts"].size() <= kMaxAttempts) doc["attempts"].push_back(one_attempt(0, false));
  EXPECT_THROW(write_progress(ticket_, kAda, doc, secret_), std::runtime_error);
  doc["attempts"] = json::array({one_attempt(0, false)});
  doc["attempts"][0]["cause"] = std::string(kMaxProgressBytes, 'x');
  EXPECT_THROW(write_progress(ticket_, kAda, doc, secret_), std::runtime_error);
  EXPECT_EQ(text_of(file()), before);
  std::ofstream(file(), std::ios::app) << std::string(kMaxProgressBytes, ' ');
  EXPECT_EQ(read_progress(ticket_, kAda, secret_).state, ProgressState::kTooLarge);
  fs::remove(file());
  EXPECT_EQ(read_progress(ticket_, kAda, secret_).state, ProgressState::kMissing);
  EXPECT_FALSE(fs::exists(file())) << "a missing progress is never made afresh";
}

TEST_F(LabProgressFile, TheSecretIsMadeOncePrivateAndRefusedWhenOthersMayReadIt) {
  const std::string path = dir_.path + "/" + kSecretFile;
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600U);
  EXPECT_EQ(secret_.size(), 64U);
  EXPECT_EQ(make_or_read_secret(dir_.path), secret_);
  ASSERT_EQ(::stat(ticket_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700U);
  fs::permissions(path, fs::perms::group_read | fs::perms::others_read, fs::perm_options::add);
  EXPECT_THROW(read_secret(dir_.path), std::runtime_error);
}

}  // namespace
}  // namespace ncclfi::cli::lab
