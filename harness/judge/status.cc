// run_status(): the one place that decides what a run's status is. The console, summary.json,
// junit.xml, report.html, verdict.json and ncclfi's exit code all ask it.
#include "run_record.h"

namespace ncclfi::harness {

std::string_view to_string(RunStatus status) {
  switch (status) {
    case RunStatus::kPass:
      return "pass";
    case RunStatus::kFail:
      return "fail";
    case RunStatus::kUnknown:
      return "unknown";
    case RunStatus::kSkipped:
      return "skipped";
    case RunStatus::kError:
      break;
  }
  return "error";
}

RunStatus run_status(const RunRecord& record) {
  if (record.skipped) return RunStatus::kSkipped;
  if (!record.harness_error.empty()) return RunStatus::kError;
  switch (record.judgement.verdict) {
    case Answer::kPass:
      return RunStatus::kPass;
    case Answer::kFail:
      return RunStatus::kFail;
    case Answer::kUnknown:
      break;
  }
  return RunStatus::kUnknown;
}

StatusCounts count_statuses(const std::vector<RunRecord>& records) {
  StatusCounts c;
  for (const auto& r : records) {
    switch (run_status(r)) {
      case RunStatus::kPass:
        ++c.pass;
        break;
      case RunStatus::kFail:
        ++c.fail;
        break;
      case RunStatus::kUnknown:
        ++c.unknown;
        break;
      case RunStatus::kSkipped:
        ++c.skipped;
        break;
      case RunStatus::kError:
        ++c.error;
        break;
    }
  }
  return c;
}

std::string counts_text(const StatusCounts& c) {
  return std::to_string(c.total()) + " scenario(s): " + std::to_string(c.pass) + " passed, " +
         std::to_string(c.fail) + " failed, " + std::to_string(c.unknown) + " unknown, " +
         std::to_string(c.skipped) + " skipped, " + std::to_string(c.error) + " harness error(s)";
}

}  // namespace ncclfi::harness
