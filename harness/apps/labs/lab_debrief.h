// The student's debrief (`ncclfi lab debrief WORKSPACE`), once their answer is final: the answer, why,
// the lines of their own workspace that point to it (found from the lab's "evidence" entries), and
// what each of their wrong attempts missed. Before the answer is final it is refused: a debrief is the
// answer.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lab_class.h"

namespace ncclfi::cli::lab {

// One line of a workspace file: where it is and what it says.
struct EvidenceQuote {
  std::string file;  // relative to the workspace
  int line = 0;      // 1-based
  std::string text;
};

// The lines of `workspace` that the evidence entry `entry` points at. An entry reads "FILES: what to
// see" (FILES: a file, a directory/, a glob like training/rank-*.log, or several joined by words), or
// just "what to see" (then every file of the workspace's jobs). A line is quoted when it shares the
// entry's distinctive terms (log tokens such as IBV_WC_RETRY_EXC_ERR or ncclSystemError count most,
// plain words and numbers less): at most `max_quotes`, the best first, none that match too little.
std::vector<EvidenceQuote> find_evidence(const std::string& workspace, const std::string& entry,
                                         size_t max_quotes = 3);

// Whether the student's answer is final, and why ("" while they may still answer): answered right,
// no attempts left, or the class's deadline has passed.
std::string final_answer_reason(const nlohmann::json& progress, const ClassSettings& settings,
                                int64_t now_ns);

// Writes the debrief of `workspace` from its key.json and its verified progress.
void write_student_debrief(std::ostream& out, const std::string& workspace, const nlohmann::json& key,
                           const nlohmann::json& progress, const std::string& final_reason);

}  // namespace ncclfi::cli::lab
