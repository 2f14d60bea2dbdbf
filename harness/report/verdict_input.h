// Reading a run's verdict.json back (`ncclfi report`): a file anyone may have edited. What cannot be
// read is said with the file, the field and what was expected (json_field_error.h), never with the
// library's exception text.
#pragma once

#include <string>
#include <vector>

#include "run_record.h"

namespace ncclfi::harness {

// The run record in the verdict at `path`; throws std::runtime_error "PATH: /field: expected ...".
RunRecord read_verdict(const std::string& path);
// What is wrong with each verdict.json at or under `dir` that cannot be read (empty when all can, and
// for a suite directory, whose runs are read where its summary points).
std::vector<std::string> unreadable_verdicts(const std::string& dir);

}  // namespace ncclfi::harness
