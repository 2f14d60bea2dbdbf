// `ncclfi lab debrief WORKSPACE` for the student (lab_debrief.h): only once their answer is final.
#include <iostream>

#include "cmd_lab.h"
#include "lab_class.h"
#include "lab_debrief.h"
#include "lab_progress.h"
#include "lab_ticket.h"
#include "ncclfi/event_log.h"

namespace ncclfi::cli {
namespace fs = std::filesystem;
using namespace ncclfi::cli::lab;

int cmd_student_debrief(const std::string& workspace) {
  const OpenTicket t = open_ticket(workspace, "", WorkspaceCheck::kSameWorkspace);
  const nlohmann::json progress = read_verified_progress(t.key_path, t.owner, t.secret);
  const ClassSettings settings = read_class_settings(fs::path(t.key_path).parent_path().string());
  const std::string reason = final_answer_reason(progress, settings, Clock::wall_ns());
  if (reason.empty())
    throw std::runtime_error("answer first: the debrief is there once you have answered right, used your " +
                             std::to_string(settings.attempts) + " attempts, or the deadline has passed");
  write_student_debrief(std::cout, workspace, t.key, progress, reason);
  return kAllPassed;
}

}  // namespace ncclfi::cli
