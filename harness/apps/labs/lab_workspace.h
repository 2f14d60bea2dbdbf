// A lab's two directories. The student workspace holds only what an operator of the job would have:
// each rank's log, step timings, exit statuses, the job's command and settings, and a report without
// injections. The key directory holds the truth: the variant, the answer key, the hints, the run
// directories (plan, events, verdicts) and every hint and attempt of the student.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lab_catalogue.h"
#include "reports.h"

namespace ncclfi::cli::lab {

// What `lab.json` in a workspace names: the lab, the student and where the key is (never the truth).
// The student can edit it: read_ticket refuses a ticket id that is not one (it becomes a path), and
// lab_ticket.h checks the rest against the key directory.
struct Ticket {
  std::string lab, student, ticket_id, key_dir;
  int64_t started_ns = 0;
  std::string server;  // the lab service's socket, when the workspace came from `lab serve`
};
Ticket read_ticket(const std::string& workspace);

// Writes the workspace from the runs of the lab's jobs (one record per job, in order). BRIEFING.md's
// commands call it `shown_as` (the student's path when `lab serve` makes it elsewhere).
void write_workspace(const std::string& workspace, const Lab& lab, const LabVariant& variant,
                     const std::vector<harness::RunRecord>& runs, const Ticket& ticket,
                     const std::string& shown_as);

// The key directory of one workspace: KEY_DIR/TICKET/.
std::string key_path(const Ticket& ticket, const std::string& key_dir_override = "");
nlohmann::json read_key(const std::string& key_path);
void write_json_atomically(const std::string& path, const nlohmann::json& doc);
// Replaces `path` with `text` at once: written beside it, then renamed over it.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace ncclfi::cli::lab
