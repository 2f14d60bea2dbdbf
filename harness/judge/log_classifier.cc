// Rank output classifiers: the exact lines of docs/failure-signatures.md (PyTorch ProcessGroupNCCL,
// torchrun, NCCL, nccl-tests, Open MPI) mapped to detection mechanisms, evidence or restarts.
#include <fstream>
#include <istream>
#include <stdexcept>

#include "observe.h"

namespace ncclfi::harness {
namespace {

constexpr size_t kMaxEvidenceChars = 400;

LogPattern make(const char* name, LineKind kind, const char* mechanism, const char* regex,
                const char* must_contain = "") {
  return LogPattern{name, kind, mechanism, LineRegex(regex), must_contain};
}

std::vector<LogPattern> builtin_patterns() {
  using K = LineKind;
  std::vector<LogPattern> p;
  // PyTorch ProcessGroupNCCL watchdog (failure-signatures.md 2.2 steps 1-2).
  p.push_back(make("torch.watchdog_timeout", K::kDetection, "torch_watchdog",
                   R"(Watchdog caught collective operation timeout)", "Watchdog caught"));
  p.push_back(make("torch.watchdog_failure", K::kDetection, "torch_watchdog",
                   R"(failure detected by watchdog at work sequence id)", "failure detected by watchdog"));
  // Heartbeat monitor (step 8), and the older wording.
  p.push_back(make("torch.heartbeat_stuck", K::kDetection, "torch_heartbeat",
                   R"(ProcessGroupNCCL's watchdog got stuck for \d+ seconds)", "watchdog got stuck"));
  // The monitor's kill, whatever woke it: "due to ProcessGroupNCCL watchdog hang" (no heartbeat) or "due to
  // collective timeout or exception" (a timeout signalled a dump, and the watchdog did not end the process
  // within the heartbeat timeout after it, e.g. stuck in ncclCommAbort: seen on PyTorch 2.11).
  p.push_back(make("torch.heartbeat_terminate", K::kDetection, "torch_heartbeat",
                   R"(Terminating the process after attempting to dump debug info, due to)",
                   "Terminating the process after attempting"));
  p.push_back(make("torch.heartbeat_timeout", K::kDetection, "torch_heartbeat",
                   R"(Heartbeat monitor timed out)", "Heartbeat monitor"));
  // NCCL async errors as PyTorch's watchdog reports them (step 7), then NCCL's own text.
  p.push_back(make("nccl.remote_error_async", K::kDetection, "async_error",
                   R"(NCCL error: remote process exited or there was a network error)",
                   "remote process exited"));
  p.push_back(make("nccl.remote_error", K::kDetection, "async_error",
                   R"(remote process exited or there was a network error)", "remote process exited"));
  // NCCL errors returned by a call: PyTorch's "NCCL error in: file:line, <text>", nccl-tests'
  // "Test NCCL failure file:line '<text>'", the result code names and their strings.
  p.push_back(make("nccl.error_in", K::kDetection, "api_error", R"(NCCL error in: )", "NCCL error"));
  p.push_back(make("nccl_tests.nccl_failure", K::kDetection, "api_error", R"(Test NCCL failure )",
                   "Test NCCL failure"));
  p.push_back(make(
      "nccl.result_name", K::kDetection, "api_error",
      R"(\bnccl(SystemError|InternalError|UnhandledCudaError|InvalidUsage|InvalidArgument|RemoteError)\b)",
      "nccl"));
  p.push_back(
      make("nccl.result_text", K::kDetection, "api_error",
           R"(unhandled system error|unhandled cuda error|internal error - please report this issue)"));
  p.push_back(make("nccl.error", K::kDetection, "api_error", R"(\bNCCL error\b)", "NCCL error"));
  // nccl-tests: its -T timeout, the final out-of-bounds count, and a nonzero #wrong column in a
  // result row (size count type redop root time algbw busbw #wrong [time algbw busbw #wrong]).
  p.push_back(make("nccl_tests.timeout", K::kDetection, "nccl_tests_timeout", R"(: Test timeout \(\d+s\) )",
                   "Test timeout"));
  p.push_back(make("nccl_tests.out_of_bounds", K::kDetection, "verification",
                   R"(Out of bounds values : 0*[1-9]\d* FAILED)", "Out of bounds values"));
  p.push_back(make(
      "nccl_tests.wrong", K::kDetection, "verification",
      R"(^\s*\d+\s+\d+\s+\w+\s+\w+\s+-?\d+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+(0*[1-9]\d*(\s|$)|\S+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+0*[1-9]\d*\s*$))"));
  // torchrun / torchelastic (2.3, 2.5): a worker failed and the agent tears the group down; restarts.
  p.push_back(make("torchrun.restart", K::kRestart, "",
                   R"(Worker group FAILED\. \d+/\d+ attempts left; will restart worker group)",
                   "will restart"));
  p.push_back(make("torchrun.worker_failed", K::kDetection, "launcher_teardown",
                   R"(failed \(exitcode: -?\d+\) local_rank)", "failed (exitcode"));
  p.push_back(make("torchrun.child_failed", K::kDetection, "launcher_teardown", R"(ChildFailedError)",
                   "ChildFailedError"));
  // Open MPI tearing the job down after a rank died.
  p.push_back(make("mpirun.noticed", K::kDetection, "launcher_teardown",
                   R"(mpirun noticed that process rank \d+ with PID \d+ on node \S+ exited on signal)",
                   "mpirun noticed"));
  p.push_back(make("mpirun.nonzero", K::kDetection, "launcher_teardown",
                   R"(mpirun detected that one or more processes exited with non-zero status)",
                   "mpirun detected"));
  // Slurm's srun reporting a task's end. Evidence only: without --kill-on-bad-exit srun tears nothing
  // down, so the survivors' own mechanisms are the detections.
  p.push_back(
      make("srun.task_ended", K::kEvidence, "srun_report",
           R"(^srun: error: \S+: tasks? [\d,-]+: (Killed|Terminated|Exited with exit code \d+|.*[Ss]ignal))",
           "srun: error"));
  // Evidence for the timeline: NCCL warnings and PyTorch's teardown text (after a detection).
  p.push_back(make("torch.teardown", K::kEvidence, "torch_teardown",
                   R"(Some NCCL operations have failed or timed out|taking the entire process down)"));
  p.push_back(make("torch.dist_backend_error", K::kEvidence, "torch_teardown",
                   R"(terminate called after throwing an instance of 'c10::DistBackendError')",
                   "DistBackendError"));
  p.push_back(make("torch.comm_aborted", K::kEvidence, "nccl_comm_aborted",
                   R"(NCCL communicator was aborted on rank \d+)", "communicator was aborted"));
  p.push_back(make("torch.flight_recorder", K::kEvidence, "torch_dump",
                   R"(Observed flight recorder dump signal)", "flight recorder"));
  p.push_back(make("nccl.warn", K::kEvidence, "nccl_warn", R"(NCCL WARN)", "NCCL WARN"));
  return p;
}

std::string clip(std::string_view text) {
  if (text.size() <= kMaxEvidenceChars) return std::string(text);
  return std::string(text.substr(0, kMaxEvidenceChars)) + "...";
}

}  // namespace

LogClassifier LogClassifier::builtin() {
  LogClassifier c;
  c.patterns_ = builtin_patterns();
  return c;
}

void LogClassifier::add_pattern(const std::string& mechanism, const std::string& regex,
                                const std::string& name) {
  if (!is_known_mechanism(mechanism)) {
    throw std::invalid_argument("log pattern " + name + ": unknown detection mechanism \"" + mechanism +
                                "\"");
  }
  if (auto problem = LineRegex::check(regex)) {
    throw std::invalid_argument("log pattern " + name + ": bad regular expression \"" +
                                regex.substr(0, kMaxPatternBytes) + "\": " + *problem);
  }
  add(LogPattern{name, LineKind::kDetection, mechanism, LineRegex(regex), ""}, /*front=*/true);
}

void LogClassifier::add(LogPattern pattern, bool front) {
  if (front) {
    // Scenario patterns go before the built-ins, after earlier scenario patterns (keeps their order).
    auto it = patterns_.begin() + static_cast<std::ptrdiff_t>(front_count_);
    patterns_.insert(it, std::move(pattern));
    ++front_count_;
  } else {
    patterns_.push_back(std::move(pattern));
  }
}

std::optional<LineMatch> LogClassifier::classify(std::string_view line) const {
  for (const auto& p : patterns_) {
    const std::string_view head = line.substr(0, kMaxLineBytes);
    if (!p.must_contain.empty() && head.find(p.must_contain) == std::string_view::npos) continue;
    if (p.regex.search(head)) return LineMatch{&p};
  }
  return std::nullopt;
}

std::optional<LineMatch> observe_log_line(History& history, const LogClassifier& classifier,
                                          const OutputLine& line) {
  auto match = classifier.classify(line.text);
  if (!match) return match;
  const LogPattern& p = *match->pattern;
  HistoryEvent e;
  e.ts_ns = line.ts_ns;
  e.mono_ns = line.mono_ns;
  e.host = line.host;
  e.rank = line.rank;
  e.attempt = line.attempt;
  e.source = "log";
  e.fields = {{"pattern", p.name}, {"line", clip(line.text)}, {"stream", line.stream}};
  if (line.text.size() > kMaxLineBytes) e.fields["truncated_from_bytes"] = line.text.size();
  switch (p.kind) {
    case LineKind::kDetection:
      e.event = "detection";
      e.fields["mechanism"] = p.mechanism;
      add_detection(history, Detection{p.mechanism, line.rank, line.attempt, line.ts_ns, clip(line.text),
                                       line.mono_ns, line.host});
      break;
    case LineKind::kEvidence:
      e.event = "log_evidence";
      e.fields["label"] = p.mechanism;
      break;
    case LineKind::kRestart:
      e.event = "restart";
      ++history.torchrun_restarts;
      break;
  }
  add_event(history, std::move(e));
  return match;
}

size_t observe_log_file(History& history, const LogClassifier& classifier, const std::string& path, int rank,
                        int attempt, int64_t fallback_ts_ns) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return 0;
  size_t count = 0;
  std::string text;
  while (read_bounded_line(in, text, kMaxLineBytes)) {
    ++count;
    if (!text.empty() && text.back() == '\r') text.pop_back();
    OutputLine line{fallback_ts_ns, rank, attempt, "stdout", {}};
    // "@<ts_ns> <text>": a stamp a runner may prefix to each captured line.
    if (text.size() > 2 && text[0] == '@') {
      size_t space = text.find(' ');
      if (space != std::string::npos && space > 1 && text.find_first_not_of("0123456789", 1) == space) {
        line.ts_ns = std::stoll(text.substr(1, space - 1));
        text.erase(0, space + 1);
      }
    }
    line.text = std::move(text);
    observe_log_line(history, classifier, line);
    text.clear();
  }
  return count;
}

bool read_bounded_line(std::istream& in, std::string& line, size_t max_bytes, size_t* full_bytes) {
  line.clear();
  size_t full = 0;
  std::streambuf* buf = in.rdbuf();
  bool any = false;
  bool newline = false;
  for (int c = buf->sbumpc(); c != std::char_traits<char>::eof(); c = buf->sbumpc()) {
    any = true;
    if (c == '\n') {
      newline = true;
      break;
    }
    if (full++ < max_bytes) line.push_back(static_cast<char>(c));
  }
  if (full_bytes != nullptr) *full_bytes = full;
  if (!newline) in.setstate(std::ios::eofbit);  // like getline: eof() says the line had no newline
  return any;
}

}  // namespace ncclfi::harness
