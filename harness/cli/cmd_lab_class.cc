// `ncclfi lab` for running a class (docs/labs.md, "Running a class"): `class init` writes the class's
// settings into the key directory; `start --class FILE` copies a settings file there; `start --roster
// FILE --dir DIR` starts a lab for every student of a roster.
#include <filesystem>
#include <iostream>

#include "cmd_lab.h"
#include "lab_class.h"
#include "lab_key_dir.h"
#include "lab_roster.h"

namespace ncclfi::cli {
namespace fs = std::filesystem;
using namespace ncclfi::cli::lab;

void install_class_file(const std::string& key_dir, const std::string& file) {
  const ClassSettings settings = read_class_file(file);  // checked before anything is written
  make_private_directory(key_dir);
  write_class_settings(key_dir, settings);
  std::cerr << "class settings from " << file << " in " << (fs::path(key_dir) / kClassFile).string() << "\n";
}

int start_roster(const LabArgs& args) {
  if (args.dir.empty()) throw std::runtime_error("--roster needs --dir DIR (each student gets DIR/NAME)");
  if (args.seed) throw std::runtime_error("--roster takes no --seed: each student's comes from their name");
  const std::vector<std::string> students = read_roster(args.roster);  // every line checked first
  std::vector<std::string> started;
  std::vector<std::pair<std::string, std::string>> failed;
  for (const auto& student : students) {
    const std::string dir = (fs::path(args.dir) / student).string();
    try {
      if (start_lab_for_student(args, student, dir) == kAllPassed) {
        started.push_back(student);
        continue;
      }
      failed.emplace_back(student, "the start did not finish");
    } catch (const std::exception& e) {
      failed.emplace_back(student, e.what());
    }
    std::cerr << "ncclfi lab: " << student << ": not started: " << failed.back().second << "\n";
  }
  std::cout << "roster: " << started.size() << " of " << students.size() << " started";
  if (!failed.empty()) {
    std::cout << "; not started:";
    for (const auto& [student, why] : failed) std::cout << " " << student;
  }
  std::cout << "\n";
  return failed.empty() ? kAllPassed : kSomeFailed;
}

namespace {

int cmd_class_init(const LabArgs& args) {
  nlohmann::json doc = nlohmann::json::object();
  if (args.attempts) doc["attempts"] = *args.attempts;
  if (args.wrong_penalty) doc["wrong_penalty"] = *args.wrong_penalty;
  if (!args.deadline.empty()) doc["deadline"] = args.deadline;
  const ClassSettings settings = class_settings_from_json(doc, "ncclfi lab class init");
  make_private_directory(args.key_dir);
  write_class_settings(args.key_dir, settings);
  std::cout << to_json(settings).dump(2) << "\n"
            << "class settings: " << (fs::path(args.key_dir) / kClassFile).string() << "\n";
  return kAllPassed;
}

}  // namespace

void add_class_commands(CLI::App& lab, const std::shared_ptr<LabArgs>& args, int& status) {
  auto* cls = lab.add_subcommand(
      "class", "Instructor: a class's settings (attempts, deadline, wrong-answer penalty).");
  cls->require_subcommand(1);
  auto* init = cls->add_subcommand("init", "Write KEY_DIR/class.json, which hint and answer obey.");
  init->add_option("--key-dir", args->key_dir, "the key directory")->required();
  init->add_option("--attempts", args->attempts, "answers per student and lab (1-20, default 20)");
  init->add_option("--deadline", args->deadline,
                   "ISO 8601 with a zone (2026-12-04T17:00:00Z): no hint or answer after it");
  init->add_option("--wrong-penalty", args->wrong_penalty,
                   "points each wrong answer before the right one costs (0-100, default 15)");
  describe_values(*init, {{"--key-dir", ValueKind::kDirectory, "DIR"},
                          {"--attempts", ValueKind::kText, "N"},
                          {"--deadline", ValueKind::kText, "ISO8601"},
                          {"--wrong-penalty", ValueKind::kText, "P"}});
  init->callback([args, &status] { guarded(status, [&] { return cmd_class_init(*args); }); });
}

}  // namespace ncclfi::cli
