// What a suite holds of its runs while it runs. A suite of at most kSuiteRunsWithFullHistory runs keeps
// every record in memory, whole. A longer one (a soak) writes each record to a spool file in the suite's
// directory as the run ends and holds nothing of it, so its memory does not grow with the runs; the
// records are read back once, when the suite's reports are written. A passed run is spooled with its
// history trimmed (trim_history: its run directory's verdict.json has all of it), a run that did not pass
// whole, so the suite's HTML page still draws it.
//
// Nothing is lost: a record the spool could not take (a full disk) stays in memory in its place, and a
// spooled line that cannot be read back becomes an error record saying so, which makes the suite's exit
// status a harness error.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "run_record.h"

namespace ncclfi::cli {

class SuiteRecords {
 public:
  // `spool_path`: where the spool goes when the suite has more than kSuiteRunsWithFullHistory runs.
  SuiteRecords(std::string spool_path, size_t suite_runs);
  ~SuiteRecords();  // removes the spool
  SuiteRecords(const SuiteRecords&) = delete;
  SuiteRecords& operator=(const SuiteRecords&) = delete;

  void add(harness::RunRecord record);
  // Every record, in the order added; the spool's read back. Call once, at the end.
  std::vector<harness::RunRecord> take_all();

 private:
  bool spool(const harness::RunRecord& record);  // false: the spool did not take it

  std::string spool_path_;
  size_t suite_runs_ = 0;
  std::FILE* spool_ = nullptr;  // only a suite that spools has one
  bool writable_ = true;        // false once a failed write could not be cut back
  long spool_bytes_ = 0;        // the spool's length after its last whole line
  size_t spooled_ = 0;          // lines in the spool
  size_t added_ = 0;
  // Records held in memory, with their place among all of them (every one when not spooling).
  std::vector<std::pair<size_t, harness::RunRecord>> held_;
};

}  // namespace ncclfi::cli
