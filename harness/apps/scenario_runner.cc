#include "scenario_runner.h"

#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <random>

#include "drill_abort.h"
#include "drill_report.h"
#include "injection_ledger.h"
#include "interrupt.h"
#include "judge.h"
#include "mps_generations.h"
#include "ncclfi/event_log.h"
#include "ncclfi/shared_gpu.h"
#include "observe.h"
#include "orphan_guard.h"
#include "output_tailer.h"
#include "quiet_net_plugin.h"
#include "rounds.h"
#include "run_dir.h"
#include "score.h"

namespace ncclfi::cli {
namespace fs = std::filesystem;
using harness::History;

namespace {

// 128 random bits in hex: the attempt's rendezvous key (a stranger on MASTER_PORT cannot know it).
std::string draw_job_key() {
  std::random_device random;
  char text[33];
  std::snprintf(text, sizeof text, "%08x%08x%08x%08x", random(), random(), random(), random());
  return text;
}

harness::LogClassifier make_classifier(const Scenario& s) {
  auto classifier = harness::LogClassifier::builtin();
  size_t i = 0;
  for (const auto& p : s.log_patterns) {
    const std::string name =
        p.contains("name") ? p["name"].get<std::string>() : "scenario:" + std::to_string(i);
    classifier.add_pattern(p["mechanism"].get<std::string>(), p["regex"].get<std::string>(), name);
    ++i;
  }
  return classifier;
}

void sleep_interruptible(double seconds) {
  const int64_t end = Clock::mono_ns() + static_cast<int64_t>(seconds * 1e9);  // immune to clock steps
  while (Clock::mono_ns() < end && !interrupted()) {
    timespec ts{0, 10'000'000};
    nanosleep(&ts, nullptr);
  }
}

// Shared-GPU mode's MPS daemons, fresh for every attempt and one for each generation of a job that
// restarts its own processes (mps_generations.h says why), and what the run says about them in its verdict.
class AttemptMps {
 public:
  AttemptMps(const Scenario& s, const ScenarioRunOptions& opt, harness::GpuMode& mode)
      : opt_(opt), mode_(mode), generations_(job_generations(s)) {
    if (!opt.gpu.shared) return;
    mode_.mps = !opt.mps ? "none (--mps never): the ranks time-slice the GPU" : describe(generations_, "");
  }
  // Starts the attempt's daemons, whose logs go to `log_dir`/mps; returns what the job's processes need.
  std::map<std::string, std::string> start(const std::string& log_dir, const std::string& harness_id) {
    daemons_.reset();
    if (!opt_.gpu.shared || !opt_.mps || unavailable_) return {};
    static int serial = 0;
    // Short and private: each daemon's Unix socket lives below it (108 bytes at most).
    const std::string base = (fs::temp_directory_path() /
                              ("ncclfi-mps-" + std::to_string(getpid()) + "-" + std::to_string(++serial)))
                                 .string();
    std::string why;
    daemons_ =
        MpsGenerations::start(base, log_dir + "/mps", generations_, current_environment(), harness_id, &why);
    if (!daemons_) {
      // Once unavailable, for the whole run: every attempt then runs alike (time-sliced).
      unavailable_ = true;
      mode_.mps = "none (" + why + "): the ranks time-slice the GPU";
      return {};
    }
    if (daemons_->count() < generations_) mode_.mps = describe(daemons_->count(), why);
    return daemons_->client_env();
  }
  // Stops the attempt's daemons, after noting in `history` what their servers said of their own failures.
  void stop(harness::History& history, int attempt) {
    if (!daemons_) return;
    history.own_mps = true;
    const size_t room =
        harness::kMaxMpsFailures - std::min(harness::kMaxMpsFailures, history.mps_failures.size());
    for (auto& line : daemons_->server_failures(room)) {
      history.mps_failures.push_back("attempt " + std::to_string(attempt) + ", " + line);
    }
    daemons_.reset();
  }

 private:
  // A launcher that restarts its workers (torchrun) does so up to max_restarts times inside one attempt.
  static int job_generations(const Scenario& s) {
    const int restarts = launcher_of(s).restarts_workers ? s.launcher.max_restarts : 0;
    return std::min(1 + restarts, kMaxMpsGenerations);
  }
  static std::string describe(int generations, const std::string& short_because) {
    const std::string text =
        generations == 1
            ? "own daemon per attempt"
            : "own daemons per attempt, one for each of " + std::to_string(generations) +
                  " generations of the job (its launcher's restarts; later ones time-slice the GPU)";
    if (short_because.empty()) return text;
    return text + "; the job's restarted generations time-slice the GPU: no daemon for them (" +
           short_because + ")";
  }
  const ScenarioRunOptions& opt_;
  harness::GpuMode& mode_;
  const int generations_;
  std::unique_ptr<MpsGenerations> daemons_;
  bool unavailable_ = false;
};

// What a run keeps on this host for all its attempts: the MPS daemons, the quiet net plugin's directory.
struct RunHostResources {
  AttemptMps& mps;
  const std::string& net_plugin_dir;
};

// The attempts of one pass (the baseline or the real run) into `history`, under the restart policy.
struct PassSettings {
  std::string dir;      // absolute: where events.jsonl and attempt-N/ go
  std::string dir_rel;  // relative to the run directory ("" or "baseline")
  bool faults = true;   // false: the baseline, nothing armed
  int round = 1;        // the timing verdict's round this pass belongs to (rounds.h)
};

// What the progress line says of a pass: the scenario, baseline or faulted, and the round of a scenario
// whose verdict may take rounds (a timing verdict: one with baselines).
harness::ProgressState progress_base(const Scenario& s, const ScenarioRunOptions& opt,
                                     const PassSettings& pass) {
  harness::ProgressState st;
  st.index = opt.index;
  st.total = opt.total;
  st.scenario = s.name;
  st.pass = pass.faults ? "faulted" : "baseline";
  if (s.needs_baseline()) {
    st.round = pass.round;
    st.rounds = static_cast<int>(harness::kMaxTimingRounds);
  }
  return st;
}

void run_pass(const Scenario& s, const ScenarioRunOptions& opt, const std::string& run_dir,
              const PassSettings& pass, const harness::LogClassifier& classifier, History& history,
              RunHostResources host) {
  const auto launcher = make_launcher(s.launcher.kind);
  const std::string events_path = pass.dir + "/events.jsonl";
  EventLog harness_events(events_path, "harness");
  long events_offset = OutputTailer::file_size(events_path);
  const int max_attempts = pass.faults ? s.restart.max + 1 : 1;
  history.attempts = 0;
  for (int attempt = 0; attempt < max_attempts; ++attempt) {
    if (poll_abort_request(run_dir)) {  // `ncclfi abort` between attempts: launch nothing more
      history.interrupted = true;
      break;
    }
    AttemptInputs in;
    in.ctx.scenario = &s;
    in.ctx.install = opt.install;
    in.ctx.attempt = attempt;
    in.ctx.inject = pass.faults && s.restart.faults_on(attempt);
    in.ctx.run_dir = run_dir;
    const std::string rel =
        (pass.dir_rel.empty() ? "" : pass.dir_rel + "/") + "attempt-" + std::to_string(attempt);
    in.ctx.log_dir = run_dir + "/" + rel;
    fs::create_directories(in.ctx.log_dir);
    in.ctx.plan_path = run_dir + "/plan.json";
    in.ctx.events_path = events_path;
    in.ctx.master_port = pick_free_port();
    in.ctx.harness_id = OrphanGuard::harness_id();
    in.ctx.job_key = draw_job_key();
    in.ctx.parent_env = current_environment();
    in.ctx.gpu = opt.gpu;
    in.ctx.mps_env = host.mps.start(in.ctx.log_dir, in.ctx.harness_id);
    in.ctx.net_plugin_dir = host.net_plugin_dir;
    in.ctx.allowed_hosts = opt.allowed_hosts;
    in.launcher = launcher.get();
    in.classifier = &classifier;
    in.log_dir_rel = rel;
    in.events_offset = events_offset;
    in.progress = opt.progress;
    in.progress_base = progress_base(s, opt, pass);
    history.attempts = attempt + 1;
    const AttemptResult r = run_attempt(in, history);
    host.mps.stop(history, attempt);
    events_offset = r.events_end_offset;
    history.deadline_hit = history.deadline_hit || r.deadline_hit;
    if (r.interrupted) {
      history.interrupted = true;
      break;
    }
    if (!r.failed || attempt + 1 >= max_attempts) break;
    harness_events.write(
        "restart",
        {{"attempt", attempt + 1}, {"after_attempt", attempt}, {"backoff_s", s.restart.backoff_s}});
    sleep_interruptible(s.restart.backoff_s * (1 << std::min(attempt, 6)));
    if (interrupted()) {
      history.interrupted = true;
      break;
    }
  }
  // Anything written after the last attempt's final read (the restart line of an interrupted pass). No
  // injection channel is open any more: an inject line here has no record, unless the injections are
  // read from the events file anyway (node agents).
  OutputTailer rest(events_path, events_offset, harness::kMaxEventLineBytes + 1);
  harness::InjectionLedger late_injections(history, history.attempts - 1);
  harness::InjectionLedger* ledger = s.launcher.nodes > 0 ? nullptr : &late_injections;
  rest.read_rest([&](const std::string& line) {
    harness::observe_event_line(line, history, history.attempts - 1, ledger);
  });
  late_injections.settle();
  harness::observe_exits(history);
}

// One round: the faulted run with its baselines, half before it and half after: their spread is the
// noise the run is judged against, and it covers a host whose load drifts meanwhile. Round `round` (from
// 1) has its own folder in the run directory (round-N), but for the first one.
void run_round(const Scenario& s, const ScenarioRunOptions& opt, const std::string& run_dir, int round,
               const harness::LogClassifier& classifier, History& history, RunHostResources host) {
  const std::string rel = round == 1 ? "" : "round-" + std::to_string(round);
  history.scenario = s.name;
  history.world_size = s.workload.ranks;
  history.start_ns = Clock::wall_ns();
  history.nccl_env.given = harness::given_nccl_env(current_environment(), s.env);
  const std::string prefix = rel.empty() ? "" : rel + "/";
  const int baseline_runs = s.needs_baseline() ? std::max(1, s.baseline_runs) : 0;
  auto run_baseline = [&](int i) {
    History baseline;
    baseline.scenario = s.name + " (baseline)";
    baseline.world_size = s.workload.ranks;
    baseline.start_ns = Clock::wall_ns();
    const std::string dir = prefix + (baseline_runs == 1 ? "baseline" : "baseline-" + std::to_string(i + 1));
    fs::create_directories(run_dir + "/" + dir);
    run_pass(s, opt, run_dir, {run_dir + "/" + dir, dir, false, round}, classifier, baseline, host);
    baseline.end_ns = Clock::wall_ns();
    const auto perf = harness::measure_performance(baseline);
    history.baselines.push_back({perf.total_s, perf.steps_s});
    history.interrupted = history.interrupted || baseline.interrupted;
    for (const auto& why : baseline.records_lost) history.records_lost.push_back("baseline: " + why);
  };
  const int before = (baseline_runs + 1) / 2;
  for (int i = 0; i < before && !history.interrupted; ++i) run_baseline(i);
  if (!history.interrupted) {
    const std::string dir = rel.empty() ? run_dir : run_dir + "/" + rel;
    fs::create_directories(dir);
    run_pass(s, opt, run_dir, {dir, rel, true, round}, classifier, history, host);
  }
  history.end_ns = Clock::wall_ns();  // the run's own span: the later baselines are not part of it
  // The faults were armed when an attempt that ran had them on: such a run must show an injection.
  for (int attempt = 0; attempt < history.attempts; ++attempt) {
    if (!s.restart.faults_on(attempt)) continue;
    for (const auto& f : s.plan.faults) history.armed_faults.push_back(f.id);
    break;
  }
  for (int i = before; i < baseline_runs && !history.interrupted; ++i) run_baseline(i);
}

}  // namespace

harness::RunRecord run_scenario(const Scenario& s, const ScenarioRunOptions& opt) {
  harness::RunRecord record;
  record.scenario = s.name;
  record.summary = s.summary;
  record.tags = s.tags;
  record.expect = s.expectation;
  record.gpu.placement = opt.gpu.describe();
  record.gpu.shared = opt.gpu.shared;
  AttemptMps mps(s, opt, record.gpu);
  harness::JudgeOptions judge_options;
  // Every round's history and judgement; the one a majority agrees with becomes the record's.
  std::vector<History> histories(1);
  std::vector<harness::Judgement> judgements;
  try {
    record.run_dir = make_run_dir(opt.out_root, s.name);
    judge_options.run_dir = record.run_dir;
    harness::write_file_atomic(record.run_dir + "/scenario.json", s.doc.dump(2) + "\n");
    harness::write_file_atomic(record.run_dir + "/plan.json", to_json(s.plan).dump(2) + "\n");
    write_harness_record(record.run_dir);  // who `ncclfi abort` asks to stop
    const auto classifier = make_classifier(s);
    const QuietNetPlugin net_plugin(s, opt.install, current_environment());
    const RunHostResources host{mps, net_plugin.dir()};
    run_round(s, opt, record.run_dir, 1, classifier, histories.back(), host);
    // A timing verdict is repeated in rounds of its own until a majority agrees (rounds.h).
    for (;;) {
      judgements.push_back(harness::judge(histories.back(), s.expectation, judge_options));
      if (histories.back().interrupted || !harness::decide_rounds(judgements).need_another) break;
      histories.emplace_back();
      run_round(s, opt, record.run_dir, static_cast<int>(histories.size()), classifier, histories.back(),
                host);
    }
  } catch (const std::exception& e) {
    record.harness_error = e.what();
  }
  if (opt.progress) {
    harness::ProgressState st = progress_base(s, opt, {"", "", true, static_cast<int>(histories.size())});
    st.phase = "judging";
    opt.progress(st);
  }
  if (judgements.size() < histories.size()) {  // the harness failed before judging the last round
    if (histories.back().start_ns == 0) histories.back().start_ns = Clock::wall_ns();
    if (histories.back().end_ns == 0) histories.back().end_ns = Clock::wall_ns();
    judgements.push_back(harness::judge(histories.back(), s.expectation, judge_options));
  }
  const harness::RoundsDecision rounds = harness::decide_rounds(judgements);
  record.history = std::move(histories[rounds.chosen]);
  record.judgement = std::move(judgements[rounds.chosen]);
  if (rounds.check) harness::add_check(record.judgement, *rounds.check);
  History& history = record.history;
  // A run whose records have holes is judged unknown (check_records) and is a harness error: what ncclfi
  // was asked to keep, it could not.
  if (!history.records_lost.empty() && record.harness_error.empty()) {
    record.harness_error = "the run's records are incomplete: " + history.records_lost.front();
  }
  if (history.interrupted && record.harness_error.empty()) {
    record.harness_error =
        abort_requested()
            ? std::string("aborted by `ncclfi abort`: every fault disarmed, the job torn down; partial run")
            : "interrupted by signal " + std::to_string(interrupt_signal()) + ": partial run";
  }
  if (!record.harness_error.empty()) {
    record.judgement.reasons.insert(record.judgement.reasons.begin(), "harness: " + record.harness_error);
  }
  record.diagnosis = score::diagnose_beside_truth(record);
  if (!record.run_dir.empty()) {
    try {
      harness::write_verdict(record);
      // For the people on call: paste into a postmortem (drill_report.h).
      harness::write_file_atomic(record.run_dir + "/drill-report.md", harness::drill_report_markdown(record));
    } catch (const std::exception& e) {
      record.harness_error += std::string(record.harness_error.empty() ? "" : "; ") + e.what();
    }
  }
  return record;
}

}  // namespace ncclfi::cli
