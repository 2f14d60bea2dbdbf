// `ncclfi timeouts`: the model of a timeout-validation matrix, without running anything. A user's job
// (a scenario that runs clean) is measured healthy, then run under each setting under test (process-group
// timeout, TORCH_NCCL_* modes, restarts, ...) against each fault of a fixed menu, several trials per cell.
// This file decides what a setting and a fault are, how a trial's run is read (detected or not, by what,
// how fast, how long until every rank was gone or training resumed, false alarms), how trials make a cell,
// which settings never detect a hang, and the recommended timeout. timeouts_runner.cc runs the trials.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run_record.h"
#include "timeout_settings.h"

namespace ncclfi::cli {

// The fault menu. Each is one fault on one rank, after the job has warmed up.
enum class MatrixFault {
  kStall,     // the rank's GPU work stalls for stall_s, then goes on: a slow but healthy step
  kGpuHang,   // the rank's collective never completes on the GPU (the host thread goes on)
  kHostHang,  // the rank's thread blocks in the collective call for ever
  kDeadRank,  // the rank is SIGKILLed
  kNetError,  // the rank's communicator reports ncclRemoteError (what a network failure gives)
  // On the net shim, in its IB persona: the rank's NIC dies; its own requests and its peers' fail once
  // NCCL's IB retry budget (NCCL_IB_TIMEOUT, NCCL_IB_RETRY_CNT) has passed, with NCCL's completion lines.
  kNicDown,
  // On the net shim: the rank's traffic is dropped with its connections left open (a dead host that
  // sends no reset), so no transport error ever comes: its peers can only time out.
  kSilentPeer,
  // The rank blocks before it joins communicator creation for ever: its peers wait at connection setup
  // for a rank that never answers.
  kConnectSilent,
};
// "stall", "gpu_hang", "host_hang", "dead_rank", "net_error", "nic_down", "silent_peer", "connect_silent"
const char* to_string(MatrixFault fault);
std::optional<MatrixFault> matrix_fault_from_string(const std::string& name);
const std::vector<MatrixFault>& all_matrix_faults();
// "stall, gpu_hang, ... or connect_silent": what --fault accepts, for its error message.
std::string matrix_fault_names();
// Whether detecting it is a false alarm (the job would have survived).
bool is_survivable(MatrixFault fault);
// Whether it is a net-shim fault: it can only strike a job whose traffic goes through the shim.
bool needs_net_shim(MatrixFault fault);

struct FaultPlacement {
  int rank = 0;            // which rank
  int after_calls = 20;    // api faults: after this many all_reduce calls on that rank
  double after_ms = 5000;  // dead_rank: this long after the rank's launch
  double stall_s = 5;      // stall: how long
};
// The scenario "faults" array for `fault`.
nlohmann::json matrix_fault_json(MatrixFault fault, const FaultPlacement& at);

// What one trial showed, read from its run record.
struct TrialResult {
  bool fired = false;                 // the fault was injected
  bool detected = false;              // some mechanism other than the harness's deadline noticed it
  bool hung = false;                  // nothing noticed it and the harness's deadline ended the job
  bool false_alarm = false;           // detected although the job would have survived (stall) or was healthy
  bool left_running = false;          // detected, but the harness's deadline had to end the job
  std::string mechanism;              // the first detection's mechanism
  std::optional<double> detection_s;  // injection -> first detection
  std::optional<double> gone_s;       // first detection -> every rank of that attempt exited
  std::optional<double> resumed_s;    // first detection -> the first training step after a restart
  std::string outcome;                // the judge's outcome
  std::string run_dir;
  std::string error;  // the harness failed on this trial
};
TrialResult read_trial(const harness::RunRecord& record, MatrixFault fault);

// Healthy trials: what the job does when nothing is wrong.
struct HealthyProfile {
  int trials = 0;
  int clean = 0;                         // trials that ended clean (every rank exited 0, nothing detected)
  std::vector<double> step_s;            // every step of every trial
  std::optional<double> largest_step_s;  // the largest step seen across trials
  std::optional<double> median_step_s;
  std::optional<double> step_spread_s;  // p95 - p5 of the steps
  std::optional<double>
      longest_op_s;  // the longest op: the preload's op_time, or a workload op event other than a step
  std::optional<double> startup_s;          // launch -> first step done (median over trials)
  std::optional<double> fastest_startup_s;  // the same, the fastest trial: where a fault is placed
  std::optional<double> total_s;            // the whole run (median over trials)
  std::vector<std::string> false_alarms;    // detections in healthy trials ("torch_watchdog in trial 2")
};
HealthyProfile profile_healthy(const std::vector<harness::RunRecord>& records);

struct Cell {
  std::string setting;
  MatrixFault fault;
  std::vector<TrialResult> trials;
  // Set when the cell could not run on this job (a net fault on a job without the net shim): why. A
  // skipped cell has no trials and is never judged.
  std::string skipped{};
  // Trials run again because their fault never fired (the job ended before the fault's moment, on a
  // loaded host): what was thrown away, said in the cell's text.
  int reruns = 0;
  int fired() const;
  int detected() const;
  int hung() const;
  int false_alarms() const;
  int left_running() const;
  std::vector<std::string> mechanisms() const;  // distinct, most frequent first
  // Over the trials that have them.
  std::optional<double> median_detection_s() const;
  std::optional<double> max_detection_s() const;
  std::optional<double> median_gone_s() const;
  std::optional<double> median_resumed_s() const;
  // "detected 3/3 torch_watchdog 10.2 s (max 10.4), gone 1.1 s", "HUNG 3/3", "no fault fired 0/3", ...
  std::string text() const;
};

struct Recommendation {
  std::optional<double> timeout_s;  // none without a healthy step measured
  double margin = 3.0;              // timeout = margin x the largest healthy step
  std::string text;                 // the sentence the console prints
  // NCCL's own network timeout: a queue pair gives up once 4.096 us x 2^NCCL_IB_TIMEOUT x
  // (NCCL_IB_RETRY_CNT + 1) has passed without an answer, so that budget must clear the same
  // margin x the longest healthy step (or op) as the collective timeout.
  std::optional<double> ib_need_s;    // margin x the longest healthy step or op, unrounded
  std::optional<int> ib_timeout;      // the smallest NCCL_IB_TIMEOUT whose budget exceeds ib_need_s
  std::optional<double> ib_budget_s;  // that exponent's budget with NCCL's default NCCL_IB_RETRY_CNT
  std::string ib_text;                // the sentence the console prints
};
Recommendation recommend_timeout(const HealthyProfile& healthy, double margin);
// The smallest NCCL_IB_TIMEOUT (1 to 31) whose retry budget with `retry_count` retries exceeds `need_s`;
// nullopt when none does.
std::optional<int> min_ib_timeout(double need_s, int retry_count);

// The findings, in one place each, so that every report marks what they name: a fault the setting never
// detected where it fired (the job stays hung), the sentences about one cell (left running, a false
// alarm on a survivable stall, a fault that did not fire in every trial), and a declared timeout under
// the recommendation. A cell with a finding is a problem in every report, never shown as fine.
bool never_detected(const Cell& cell);
std::vector<std::string> cell_findings(const Cell& cell);
bool cell_has_finding(const Cell& cell);
bool timeout_under_recommendation(const TimeoutSetting& setting, const Recommendation& rec);
// A setting whose env sets NCCL_IB_TIMEOUT or NCCL_IB_RETRY_CNT (the other one at NCCL's default) to a
// retry budget at most the recommendation's need: the finding's sentence; nullopt otherwise.
std::optional<std::string> ib_timeout_finding(const TimeoutSetting& setting, const Recommendation& rec);

// The findings, one sentence each: settings that never detect a fault (the job stays hung), false alarms on a
// survivable stall, faults that never fired, declared timeouts under the recommendation.
std::vector<std::string> matrix_findings(const std::vector<TimeoutSetting>& settings,
                                         const std::vector<Cell>& cells, const Recommendation& rec);

struct MatrixReport {
  std::string scenario;
  std::string out_dir;
  int trials = 0;
  double stall_s = 0;
  harness::GpuMode gpu;
  HealthyProfile healthy;
  std::vector<TimeoutSetting> settings;
  std::vector<MatrixFault> faults;
  std::vector<Cell> cells;  // setting-major
  Recommendation recommendation;
  std::vector<std::string> findings;
  // The healthy runs' notes (NCCL_* settings NCCL did not read, nccl_env.h), each once: not findings, they
  // change no exit status.
  std::vector<std::string> notes;
  double wall_s = 0;
  std::string interrupted;  // set when the matrix stopped early: the cells hold what ran
};
}  // namespace ncclfi::cli
