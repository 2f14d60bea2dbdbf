// What a suite keeps of each run while it runs (run_record.h): a long suite must not grow by a full
// history a run, and every run's full history is in its own directory's verdict.json anyway.
#include "run_record.h"

namespace ncclfi::harness {

bool suite_keeps_full_history(size_t suite_runs, const RunRecord& record) {
  return suite_runs <= kSuiteRunsWithFullHistory || run_status(record) != RunStatus::kPass;
}

void trim_history(RunRecord& record) {
  const History& full = record.history;
  History kept;
  kept.scenario = full.scenario;
  kept.start_ns = full.start_ns;
  kept.end_ns = full.end_ns;
  kept.world_size = full.world_size;
  kept.attempts = full.attempts;
  kept.torchrun_restarts = full.torchrun_restarts;
  kept.longest_op_us = full.longest_op_us;
  kept.deadline_hit = full.deadline_hit;
  kept.interrupted = full.interrupted;
  kept.own_mps = full.own_mps;
  record.history = std::move(kept);
  record.history_trimmed = true;
}

}  // namespace ncclfi::harness
