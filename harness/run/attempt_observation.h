// What the attempt loop sees, into the History as it appears: each process's output lines (classified),
// the new lines of events.jsonl (the ranks', the agents', the harness's own), each process's start and
// end, NCCL's RAS report when the scenario asks for one, and the progress line. At the end of the
// attempt: a note for lines cut to the classifiers' length, and whether the records are complete.
#pragma once

#include <cstdint>
#include <future>
#include <memory>
#include <string>

#include "attempt_clock.h"
#include "history.h"
#include "injection_ledger.h"
#include "injection_receiver.h"
#include "job_processes.h"
#include "launch_context.h"
#include "launcher_spec.h"
#include "ncclfi/event_log.h"
#include "observe.h"
#include "output_tailer.h"
#include "progress.h"
#include "ras_probe.h"

namespace ncclfi::cli {

struct AttemptInputs;
class AgentHub;

class AttemptObservation {
 public:
  // `events`: the harness's own writer to events.jsonl.
  AttemptObservation(const AttemptInputs& in, harness::History& history, EventLog& events,
                     const AttemptClock& clock);

  // Before the processes start: the attempt's rank logs in the history, every one still unknown.
  void expect_rank_logs();
  // A process started: its log for each rank it serves, and a `launch` event.
  void launched(const JobProcess& p);
  // A process ended: its exit in the history. True when it failed (a nonzero code or a signal).
  bool ended(const JobProcess& p);
  // New output lines of every process, then new events; `final`: everything left to read.
  void follow(JobProcesses& procs, bool final = false);
  void follow_events(bool final);
  // Until `ncclfi abort`'s control event was read, at most as long as the tool may take.
  void wait_for_abort_record();

  // With probe_ras: starts the probe once three quarters of the deadline passed (`now`, `start_ns` and
  // `deadline_ns` on the monotonic clock), and records its report once it came.
  void probe_ras(int64_t now, int64_t start_ns, int64_t deadline_ns);
  void finish_ras_probe(bool wait);
  void report_progress(int64_t now, int64_t start_ns, const char* phase, const JobProcesses& procs);

  void report_truncated_lines(const JobProcesses& procs);
  void check_records_written();

  void count_injection() { ++injections_; }

  // Before the launch: the attempt's injection channel, its variables in `ctx` for every process of the
  // job. With node agents (`agents`: their hub) each node's agent gives its ranks a channel of its own
  // and relays their records (injection_relay.h), and `ctx` gets nothing. Without a
  // channel (no socket could be made) the injections are read from the events file, and the history
  // says why.
  void open_injection_channel(LaunchContext& ctx, AgentHub* agents);
  // The harness's own injection (a proc or link fault): its record straight into the ledger, then its
  // line in the events file, both with the harness's next seq.
  void record_own_injection(int rank, nlohmann::json fields, EventTime at);
  // After the last read: what the events file and the channel disagree on into the history, and an
  // events file cut or replaced behind the harness into its records lost.
  void settle_injections();
  long events_offset() const { return event_tail_.offset(); }

 private:
  const AttemptInputs& in_;
  harness::History& history_;
  EventLog& events_;
  const AttemptClock& clock_;
  OutputTailer event_tail_;
  const std::string host_ = host_name();  // the host whose monotonic clock the harness's times are on
  int injections_ = 0;
  bool abort_recorded_ = false;  // `ncclfi abort`'s control event was read
  int64_t next_progress_ns_ = 0;
  bool ras_started_ = false;
  int64_t ras_ts_ = 0;
  std::future<harness::RasReport> ras_;
  std::unique_ptr<InjectionReceiver> injection_receiver_;  // the ranks on this host
  AgentHub* injection_relays_ = nullptr;                   // the ranks under node agents
  std::unique_ptr<harness::InjectionLedger> injection_ledger_;
  uint64_t own_injection_seq_ = 0;
};

}  // namespace ncclfi::cli
