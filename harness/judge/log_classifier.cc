// Rank output classifiers: each mechanism's lines (harness/model/mechanisms/), then the restart and
// evidence lines of docs/failure-signatures.md (PyTorch, torchrun, NCCL, CUDA, Slurm).
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

// Lines that are not a mechanism's: a restart, or evidence for the timeline. Tried after every
// mechanism's lines (mechanisms/), so a line that quotes a detection's text counts as that detection.
std::vector<LogPattern> restart_and_evidence_patterns() {
  using K = LineKind;
  std::vector<LogPattern> p;
  // torchrun / torchelastic (2.3, 2.5): the agent restarts the worker group.
  p.push_back(make("torchrun.restart", K::kRestart, "",
                   R"(Worker group FAILED\. \d+/\d+ attempts left; will restart worker group)",
                   "will restart"));
  // Slurm's srun reporting a task's end. Evidence only: without --kill-on-bad-exit srun tears nothing
  // down, so the survivors' own mechanisms are the detections.
  p.push_back(
      make("srun.task_ended", K::kEvidence, "srun_report",
           R"(^srun: error: \S+: tasks? [\d,-]+: (Killed|Terminated|Exited with exit code \d+|.*[Ss]ignal))",
           "srun: error"));
  // NCCL warnings and PyTorch's teardown text (after a detection).
  p.push_back(make("torch.teardown", K::kEvidence, "torch_teardown",
                   R"(Some NCCL operations have failed or timed out|taking the entire process down)"));
  p.push_back(make("torch.dist_backend_error", K::kEvidence, "torch_teardown",
                   R"(terminate called after throwing an instance of 'c10::DistBackendError')",
                   "DistBackendError"));
  p.push_back(make("torch.comm_aborted", K::kEvidence, "nccl_comm_aborted",
                   R"(NCCL communicator was aborted on rank \d+)", "communicator was aborted"));
  p.push_back(make("torch.flight_recorder", K::kEvidence, "torch_dump",
                   R"(Observed flight recorder dump signal)", "flight recorder"));
  // CUDA refusing the GPU itself (failure-signatures.md section 8): under ncclfi's MPS daemon, what a
  // process meets when a killed client's error reaches it; the judge weighs it (check_shared_gpu).
  p.push_back(make("cuda.device_unavailable", K::kEvidence, "cuda_unavailable",
                   R"(CUDA-capable device\(s\) is/are busy or unavailable|\bcudaErrorDevicesUnavailable\b|)"
                   R"(\bCUDA_ERROR_DEVICE_UNAVAILABLE\b|\bcudaErrorMps\w+|\bCUDA_ERROR_MPS_\w+)"));
  p.push_back(make("nccl.warn", K::kEvidence, "nccl_warn", R"(NCCL WARN)", "NCCL WARN"));
  return p;
}

std::vector<LogPattern> builtin_patterns() {
  std::vector<LogPattern> p;
  for (const MechanismSpec* spec : mechanism_specs()) {
    for (const SignatureLine& line : spec->lines) {
      p.push_back(LogPattern{std::string(line.id), LineKind::kDetection, std::string(spec->name),
                             LineRegex(std::string(line.regex)), std::string(line.must_contain)});
    }
  }
  for (auto& pattern : restart_and_evidence_patterns()) p.push_back(std::move(pattern));
  return p;
}

std::string clip(std::string_view text) {
  if (text.size() <= kMaxEvidenceChars) return std::string(text);
  return std::string(text.substr(0, kMaxEvidenceChars)) + "...";
}

}  // namespace

std::string builtin_patterns_markdown() {
  std::string out = "| name | kind | mechanism or label | regex |\n| --- | --- | --- | --- |\n";
  for (const LogPattern& p : builtin_patterns()) {
    const char* kind = p.kind == LineKind::kDetection  ? "detection"
                       : p.kind == LineKind::kEvidence ? "evidence"
                                                       : "restart";
    std::string regex;
    for (char c : p.regex.pattern()) regex += c == '|' ? std::string("\\|") : std::string(1, c);
    out += "| `" + p.name + "` | " + kind + " | " + (p.mechanism.empty() ? "" : "`" + p.mechanism + "`") +
           " | `" + regex + "` |\n";
  }
  return out;
}

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
