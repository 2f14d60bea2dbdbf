// A workspace's ticket, checked against the key directory before anything reads or spends its
// progress. The workspace's lab.json is the student's own file, so what it says is only a claim: the
// key directory's key.json (which lab start wrote for that ticket) must name the same lab and student,
// and, for the commands that change progress (hint, answer), the same workspace. One student's commands
// then act only on their own ticket: a lab.json pointed at another student's ticket is refused.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "lab_progress.h"
#include "lab_workspace.h"

namespace ncclfi::cli::lab {

struct OpenTicket {
  Ticket ticket;         // as the workspace's lab.json names it
  std::string key_path;  // KEY_DIR/TICKET
  nlohmann::json key;    // KEY_DIR/TICKET/key.json
  ProgressOwner owner;   // whose progress KEY_DIR/TICKET/progress.json must be
  std::string secret;    // the key directory's, which signs it
};

// Whether the ticket must belong to this very workspace (hint, answer), or only to its lab and student
// (the instructor's commands, which may read workspaces collected elsewhere).
enum class WorkspaceCheck { kSameWorkspace, kSameStudent };

// Reads the workspace's ticket, its key and the key directory's secret (`key_dir_override`, or the one
// lab.json names). Throws, naming the files, when the ticket is not this workspace's.
OpenTicket open_ticket(const std::string& workspace, const std::string& key_dir_override,
                       WorkspaceCheck check);

}  // namespace ncclfi::cli::lab
