// The gradebook (`ncclfi lab gradebook`): one row per student and lab, from the key directory. Only a
// progress that verifies is counted (lab_progress.h); a row that does not says why in its "progress"
// word. The rows come either from the workspaces named (each one's lab.json names its ticket) or from
// the key directory alone (every ticket's key.json names its workspace, lab and student).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ncclfi::cli::lab {

// The CSV's columns, in order (gradebook_csv). `workspace` is "ok", or "missing" for a key-directory
// row whose workspace is gone (the row is still counted from the key directory).
inline constexpr const char* kGradebookHeader =
    "student,lab,variant,attempts,hints,first_score,best_score,score,right,time_to_answer_s,progress,"
    "workspace";

// The row of the workspace `workspace` (its lab.json names the ticket; `key_dir` overrides the key
// directory it names). Never throws: a problem is the row's "progress" ("error") and "problem".
nlohmann::json gradebook_row(const std::string& workspace, const std::string& key_dir);

// Every ticket of `key_dir` (KEY_DIR/TICKET/key.json), sorted by student then lab. A ticket whose
// workspace is gone is still a row, with "workspace_state": "missing"; `warnings` gets a line for it.
std::vector<nlohmann::json> gradebook_rows_from_key_dir(const std::string& key_dir,
                                                        std::vector<std::string>* warnings);

// The rows as CSV for a learning-management import: kGradebookHeader, then one line per row (fields
// quoted as RFC 4180 says). Nothing of an unverified progress is counted: its numbers are empty.
std::string gradebook_csv(const std::vector<nlohmann::json>& rows);

// How often each wrong cause was given in each lab (verified progress only): [{lab, cause, count}],
// by lab, then most often first.
nlohmann::json misconception_histogram(const std::vector<nlohmann::json>& rows);
std::string misconception_csv(const nlohmann::json& histogram);

// One CSV field, quoted when it must be (a comma, a quote, CR or LF).
std::string csv_field(const std::string& s);

}  // namespace ncclfi::cli::lab
