// The man page (ncclfi.1), written from the command model (cli_model.h) like --help, so the two can
// never disagree. The build runs the hidden `ncclfi help-man` and installs its output
// (harness/cli/CMakeLists.txt); the completion scripts come from cli_complete.h.
#pragma once

#include <string>

#include "cli_model.h"

namespace ncclfi::cli {

// A troff man page (section 1) for `root` and its visible commands (nested ones too), with `version`
// in the header.
std::string render_man_page(const CommandModel& root, const std::string& version);

}  // namespace ncclfi::cli
