// ncclfi's exit statuses, shared by every command (the table of each command's statuses: docs/cli.md).
#pragma once

namespace ncclfi::cli {

enum ExitStatus : int { kAllPassed = 0, kSomeFailed = 1, kBadInput = 2, kHarnessError = 3 };

}  // namespace ncclfi::cli
