// What the lab command's files share (cmd_lab.cc: the students' subcommands; cmd_lab_instructor.cc:
// the instructors').
#pragma once

#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli_model.h"
#include "exit_status.h"

namespace ncclfi::cli {

// What the lab subcommands parse into. Subcommands that take the same option share its value (only
// one subcommand runs).
struct LabArgs {
  std::string catalogue;  // --catalogue of list and start
  bool as_json = false;
  std::string lab, student, dir, start_key_dir;  // start (its --key-dir has a default of its own)
  std::optional<uint64_t> seed;    // start, draw: the instructor's (default: a secret random one)
  std::optional<size_t> variant;   // instead of the seed's: rehearsing a lab, scoring the diagnosis
  std::string lab_cause;           // start, draw: the seed draws only this cause's values
  std::string workspace, key_dir;  // hint, answer, debrief, key
  std::vector<int> ranks;          // answer
  std::string cause;
  std::vector<std::string> details;
  std::vector<std::string> workspaces;  // gradebook
};

// The lab directory `lab list` and `lab start` read by default: the installed catalogue, else
// ./scenarios/labs.
std::string default_lab_catalogue();

// The instructor's commands, and the student's answer/hint, run the same way: errors are bad input.
template <typename F>
void guarded(int& status, F body) {
  try {
    status = body();
  } catch (const std::exception& e) {
    std::cerr << "ncclfi lab: " << e.what() << "\n";
    status = kBadInput;
  }
}

// debrief, key, gradebook.
void add_instructor_commands(CLI::App& lab, const std::shared_ptr<LabArgs>& args, int& status);

}  // namespace ncclfi::cli
