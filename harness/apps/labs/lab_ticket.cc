#include "lab_ticket.h"

#include <filesystem>
#include <stdexcept>

#include "lab_key_dir.h"

namespace ncclfi::cli::lab {
namespace fs = std::filesystem;

namespace {

std::string key_text(const nlohmann::json& key, const char* field) {
  return key.contains(field) && key[field].is_string() ? key[field].get<std::string>() : std::string();
}

// Whether `workspace` is the directory lab start made for this ticket (key.json's "workspace"): the
// same file, however the path is written.
bool is_tickets_workspace(const std::string& workspace, const nlohmann::json& key) {
  const std::string made = key_text(key, "workspace");
  std::error_code ec;
  return !made.empty() && fs::equivalent(made, workspace, ec) && !ec;
}

}  // namespace

OpenTicket open_ticket(const std::string& workspace, const std::string& key_dir_override,
                       WorkspaceCheck check) {
  OpenTicket open;
  open.ticket = read_ticket(workspace);
  open.key_path = key_path(open.ticket, key_dir_override);
  open.key = read_key(open.key_path);
  const std::string key_file = (fs::path(open.key_path) / "key.json").string();
  const std::string lab_file = (fs::path(workspace) / "lab.json").string();
  if (key_text(open.key, "lab") != open.ticket.lab || key_text(open.key, "student") != open.ticket.student) {
    throw std::runtime_error(lab_file + " names " + open.ticket.student + " in " + open.ticket.lab +
                             ", but its ticket " + open.ticket.ticket_id + " is " +
                             key_text(open.key, "student") + "'s in " + key_text(open.key, "lab") + " (" +
                             key_file + "): a workspace acts only on its own ticket");
  }
  if (check == WorkspaceCheck::kSameWorkspace && !is_tickets_workspace(workspace, open.key)) {
    throw std::runtime_error(workspace + " is not the workspace ticket " + open.ticket.ticket_id +
                             " was made for (" + key_text(open.key, "workspace") +
                             "): a workspace acts only on its own ticket");
  }
  open.owner = {open.ticket.lab, open.ticket.student, open.ticket.ticket_id};
  open.secret = read_secret(fs::path(open.key_path).parent_path().string());
  return open;
}

}  // namespace ncclfi::cli::lab
