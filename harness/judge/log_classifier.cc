// Rank output classifiers: the signature catalogue (harness/model/signatures/): each mechanism's lines,
// then the families' detection, evidence and restart lines (NCCL, its net plugins, PyTorch, torchrun,
// Open MPI, Slurm, CUDA, the kernel).
#include <fstream>
#include <istream>
#include <stdexcept>

#include "observe.h"
#include "signature_family.h"

namespace ncclfi::harness {
namespace {

constexpr size_t kMaxEvidenceChars = 400;

LineKind line_kind(SignatureRole role) {
  switch (role) {
    case SignatureRole::kDetection:
      return LineKind::kDetection;
    case SignatureRole::kEvidence:
      return LineKind::kEvidence;
    case SignatureRole::kRestart:
      return LineKind::kRestart;
  }
  return LineKind::kEvidence;
}

// The signature catalogue (harness/model/signatures/), in its order.
std::vector<LogPattern> builtin_patterns() {
  std::vector<LogPattern> p;
  for (const CatalogueEntry& entry : signature_catalogue()) {
    const SignatureLine& line = *entry.line;
    p.push_back(LogPattern{std::string(line.id), line_kind(entry.role), std::string(entry.label),
                           LineRegex(std::string(line.regex)), std::string(line.must_contain),
                           std::string(line.site)});
  }
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
  add(LogPattern{name, LineKind::kDetection, mechanism, LineRegex(regex), "", ""}, /*front=*/true);
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
  observe_nccl_info_line(history.nccl_env, line.text);  // "NCCL_X set by environment to V" (nccl_env.h)
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
  if (!p.site.empty()) e.fields["site"] = p.site;
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
