// How the reports word a run's diagnosis from its logs alone beside the truth (run_record.h's
// LogDiagnosis): one wording for the console's failure details, the drill report and the lab debrief.
#pragma once

#include <string>
#include <vector>

#include "run_record.h"

namespace ncclfi::harness {

// "rank 3, dead_rank, crashed or died (confidence 0.56)", or "no failure in the logs".
std::string diagnosis_answer_text(const LogDiagnosis& d);
// "rank 3, dead_rank, crashed or died", or "no fault fired".
std::string diagnosis_truth_text(const LogDiagnosis& d);
// "agrees", or "disagrees on the ranks and the site", or "" where nothing was compared.
std::string diagnosis_agreement_text(const LogDiagnosis& d);
// The rows of a three-column table: what | from the logs alone | the truth | agrees.
std::vector<std::vector<std::string>> diagnosis_rows(const LogDiagnosis& d);

}  // namespace ncclfi::harness
