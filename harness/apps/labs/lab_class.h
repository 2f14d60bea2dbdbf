// A class's settings (docs/labs.md, "Running a class"): how many answers each student may give, by when,
// and what each wrong answer costs. They live in the key directory (KEY_DIR/class.json), beside the
// secret, where students cannot change them; `ncclfi lab class init` writes them, and `lab start
// --class FILE` copies a file of the instructor's there. A key directory without one has the defaults.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "lab_grading.h"
#include "lab_progress.h"

namespace ncclfi::cli::lab {

inline constexpr const char* kClassFile = "class.json";

struct ClassSettings {
  size_t attempts = kMaxAttempts;            // 1 to kMaxAttempts (what a progress file keeps)
  int wrong_penalty = kWrongAttemptPenalty;  // points per wrong attempt before the right one, 0-100
  std::optional<int64_t> deadline_ns;        // wall clock, ns since the epoch
  std::string deadline;                      // as the instructor wrote it (ISO 8601)
};

// "2026-12-04T17:00:00Z", "2026-12-04T17:00+01:00" (seconds optional, a zone required): ns since the
// epoch. Throws std::runtime_error saying what was expected.
int64_t parse_iso8601(const std::string& text);

// The settings a document states: {"attempts": N, "deadline": "ISO 8601", "wrong_penalty": P}, each
// optional. Throws, naming `file` and the field and what was expected, for anything else.
ClassSettings class_settings_from_json(const nlohmann::json& doc, const std::string& file);
nlohmann::json to_json(const ClassSettings& settings);

// Reads a class file the instructor wrote (JSON or YAML, by its extension).
ClassSettings read_class_file(const std::string& path);
// KEY_DIR/class.json, or the defaults when there is none.
ClassSettings read_class_settings(const std::string& key_dir);
// Writes KEY_DIR/class.json (atomically, mode 0600).
void write_class_settings(const std::string& key_dir, const ClassSettings& settings);

// Why an answer or a hint is refused at `now_ns` ("" when it is not): the deadline has passed.
std::string past_deadline(const ClassSettings& settings, int64_t now_ns);

}  // namespace ncclfi::cli::lab
