// What the lab command's files share (cmd_lab.cc: the students' subcommands; cmd_lab_instructor.cc:
// the instructors').
#pragma once

#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
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
  std::string roster, class_file;       // start (cmd_lab_class.cc)
  bool misconceptions = false;          // gradebook
  std::optional<size_t> attempts;       // class init
  std::optional<int> wrong_penalty;
  std::string deadline;
  std::string server;  // start, hint, answer, debrief: the lab service's socket; serve: where to listen
};

// One start of a lab (lab start, a roster's, and lab serve's): the draw, the student, where things go.
struct LabStart {
  std::string catalogue, lab, student;
  std::optional<uint64_t> seed;   // default: a secret random one
  std::optional<size_t> variant;  // instead of the seed's
  std::string cause;              // the seed draws only this cause's values
  std::string dir;                // the workspace (default lab-LAB-STUDENT)
  std::string key_dir;
  // Set by `lab serve`: the workspace is made in the ticket's private directory (dir is not used), its
  // lab.json names this socket, and its BRIEFING.md calls it `shown_dir` (the student's path).
  std::string server, shown_dir;
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

// cmd_lab_class.cc: `lab class init`, and what `lab start --roster/--class` does.
void add_class_commands(CLI::App& lab, const std::shared_ptr<LabArgs>& args, int& status);
// Copies the class file `file` (checked first) into `key_dir` as class.json.
void install_class_file(const std::string& key_dir, const std::string& file);
// Starts args.lab for every student of args.roster, each in args.dir/NAME: a failing start is reported
// and the others go on. Exit 0 when all started, 1 when some did not, 2 for a bad roster (nothing ran).
int start_roster(const LabArgs& args);
// cmd_lab_debrief.cc: the student's debrief of their own workspace, once their answer is final (exit 2
// "answer first" before).
int cmd_student_debrief(const std::string& workspace);
// A lab's job that could not run (a harness error, exit 3), as against a bad lab or request (exit 2).
struct LabJobError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// cmd_lab.cc: a start, a hint, an answer (the student's commands when no lab service is used, and what
// the service runs for them). A start throws LabJobError when a job could not run.
int lab_start(const LabStart& start);
int lab_hint(const std::string& workspace, const std::string& key_dir);
int lab_answer(const std::string& workspace, const std::vector<int>& ranks, const std::string& cause,
               const std::vector<std::string>& details, const std::string& key_dir);
// cmd_lab_serve.cc: `lab serve`, and the students' side of it. The socket a hint, answer or debrief of
// args.workspace goes to: none when --key-dir is given (run here), else --server, or the service the
// workspace came from (its lab.json; none for a workspace a local start made).
void add_serve_command(CLI::App& lab, const std::shared_ptr<LabArgs>& args, int& status);
std::string service_of_workspace(const LabArgs& args);
// `lab start` through the service: the workspace comes back into args.dir (default lab-LAB-USER).
// A service that cannot be reached or breaks off is exit 3.
int start_from_service(const LabArgs& args, const std::string& server);
// `op` is hint, answer or debrief; prints what the service printed and returns its status (3 as above).
int ask_service_about_ticket(const LabArgs& args, const std::string& server, const std::string& op);
// cmd_lab.cc: one student's start (the seed from the name), into `dir`.
int start_lab_for_student(const LabArgs& args, const std::string& student, const std::string& dir);

}  // namespace ncclfi::cli
