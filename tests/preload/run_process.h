// Runs a program in a child process with a chosen environment and a deadline, for the preload tests:
// a hang must turn into a failed (or an expected) timeout, never a stuck test.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace ncclfi::test {

struct ProcessResult {
  int exit_code = -1;      // when it exited
  int term_signal = 0;     // when a signal ended it
  bool timed_out = false;  // killed by us at the deadline
  double seconds = 0;
  std::string out;
  std::string err;
};

// Runs argv[0] with the current environment minus every NCCLFI_*, NCCL_DOUBLE_* and LD_PRELOAD
// variable, plus `env`. Kills it (SIGKILL) after `timeout_s`.
ProcessResult run_process(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                          double timeout_s);

}  // namespace ncclfi::test
