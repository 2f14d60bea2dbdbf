// The lab the lab commands' e2e tests share: a one-line shell job of the tests' own, so nothing but the
// lab commands is under test. Rank 1 prints the line that gives it away; the answer is rank 1, cause nic,
// with two hints and one misconception.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_process.h"

namespace ncclfi::e2e {

inline nlohmann::json tiny_lab() {
  return {{"lab", "tiny"},
          {"title", "A tiny lab"},
          {"topic", "tests"},
          {"difficulty", 1},
          {"needs", "cpu"},
          {"symptom", "nothing happened"},
          {"briefing", "which rank?"},
          {"variants", {{{"rank", 1}}}},
          {"jobs",
           {{{"name", "training"},
             {"about", "the job"},
             {"scenario",
              shell_scenario("lab-job", 2,
                             "echo step 1; if [ $RANK = 1 ]; then echo 'NET/IB: port error on mlx5_0:1'; fi",
                             {{"outcome", "clean"}}, 20)}}}},
          {"answer",
           {{"cause", "nic"},
            {"ranks", {"{var:rank}"}},
            {"misconceptions", {{"hung_rank", "a hung rank stops printing steps: did this one?"}}}}},
          {"hints", {"look at rank 1", "read its log"}},
          {"evidence", {"training/rank-{var:rank}.log: mlx5_0:1 raised a port error"}},
          {"explanation", "rank 1's NIC"}};
}

// A course for the lab commands' tests, under one temporary directory: the catalogue (tiny_lab(), unless
// a test writes another with write_lab) and the key directory.
class LabCourse : public ::testing::Test {
 protected:
  LabCourse() {
    std::filesystem::create_directories(catalogue_);
    write_lab(tiny_lab());
  }
  // Writes `lab` into the catalogue as LAB.json (replacing one of that name).
  void write_lab(const nlohmann::json& lab) const {
    std::ofstream(catalogue_ + "/" + lab.at("lab").get<std::string>() + ".json") << lab.dump(2);
  }
  // The gradebook's CSV line of `student` ("" when there is none).
  static std::string row_of(const std::string& csv, const std::string& student) {
    std::istringstream lines(csv);
    for (std::string line; std::getline(lines, line);)
      if (line.rfind(student + ",", 0) == 0) return line;
    return "";
  }

  TempDir dir_;
  const std::string catalogue_ = dir_.path + "/labs";
  const std::string keys_ = dir_.path + "/keys";
};

}  // namespace ncclfi::e2e
