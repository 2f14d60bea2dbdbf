// The name of each run in the reports (the console table and its failure details, summary.json's
// `run_name`, JUnit's test case, runs.csv's `run_name`): its scenario's name, followed by "#N" for the
// N-th run of a scenario that has more than one run among `records` (`ncclfi run --repeat`), so that
// the rows and test cases of repeats can be told apart. Derived from the records' order, so `ncclfi
// report` names them as the run did.
#pragma once

#include <string>
#include <vector>

#include "run_record.h"

namespace ncclfi::harness {

std::vector<std::string> run_names(const std::vector<RunRecord>& records);

}  // namespace ncclfi::harness
