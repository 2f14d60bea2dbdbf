// One check per `expect` field, plus the judge's own (injection, events contract). Each answers pass,
// fail or unknown with a reason that says what was expected and what was observed. The expectation
// is already typed: a check reads its field, never the JSON.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>

#include "injection_ledger.h"
#include "judge.h"
#include "judge_internal.h"
#include "ncclfi/event_log.h"
#include "observe.h"

namespace ncclfi::harness {
namespace {

std::string fmt_s(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3fs", seconds);
  return buf;
}

std::string bounds_text(const Bounds& b, bool seconds) {
  const auto& lo = b.min;
  const auto& hi = b.max;
  auto f = [&](double x) { return seconds ? fmt_s(x) : std::to_string(static_cast<long long>(x)); };
  if (lo && hi) return "[" + f(*lo) + ", " + f(*hi) + "]";
  if (lo) return ">= " + f(*lo);
  if (hi) return "<= " + f(*hi);
  return "any";
}

CheckResult result(const char* field, Answer answer, std::string reason) {
  return CheckResult{field, answer, std::move(reason)};
}

// "+1.234s into the run": where the first injection happened, for every reason measured from it.
std::string first_injection_text(const CheckContext& ctx) {
  if (!ctx.judgement.first_injection_ns) return "no injection recorded";
  std::string s = "first_injection at ";
  if (ctx.history.start_ns > 0) {
    s += "+" + fmt_s(static_cast<double>(*ctx.judgement.first_injection_ns - ctx.history.start_ns) / 1e9) +
         " into the run";
  } else {
    s += "ts_ns " + std::to_string(*ctx.judgement.first_injection_ns);
  }
  return s;
}

std::string describe_detection(const Detection& d, const CheckContext& ctx) {
  std::string s = d.mechanism;
  if (d.rank >= 0) s += " on rank " + std::to_string(d.rank);
  if (ctx.judgement.detection_s)
    s += " " + fmt_s(*ctx.judgement.detection_s) + " after the " + first_injection_text(ctx);
  return s;
}

std::vector<std::string> outcome_names(const std::vector<Outcome>& outcomes) {
  std::vector<std::string> names;
  for (Outcome o : outcomes) names.emplace_back(to_string(o));
  return names;
}

// A clean run whose timing cannot carry the verdict, or nullptr. An expected `degraded` cannot fail on it
// when the noise is wider than the margin: the slow-down it expects could be inside the noise. An
// expected `clean` cannot pass on it when the run itself was slower than the margin, only within the
// noise. A clean run within the margin still passes a `clean` expectation: its figures show no
// slow-down, and a wide noise only means a small one could not be ruled out.
const TimingComparison* clean_in_doubt(const CheckContext& ctx) {
  if (ctx.judgement.outcome != Outcome::kClean) return nullptr;
  const auto& wanted = ctx.expect.outcomes;
  const bool expects_clean = std::find(wanted.begin(), wanted.end(), Outcome::kClean) != wanted.end();
  const bool expects_degraded = std::find(wanted.begin(), wanted.end(), Outcome::kDegraded) != wanted.end();
  const double margin = ctx.expect.margin();
  const TimingComparison* doubt = nullptr;
  for (const auto& c : ctx.judgement.timing) {
    const bool in_doubt = expects_clean ? c.hidden_by_noise(margin) : expects_degraded && c.undecided(margin);
    if (in_doubt && (!doubt || *c.noise > *doubt->noise)) doubt = &c;
  }
  return doubt;
}

}  // namespace

CheckResult check_outcome(const CheckContext& ctx) {
  const auto wanted = outcome_names(ctx.expect.outcomes);
  const std::string observed(to_string(ctx.judgement.outcome));
  const std::string said = "expected " + join(wanted, " or ") + ", observed " + observed + " (" +
                           ctx.judgement.outcome_reason + ")";
  const bool timed = !ctx.judgement.timing.empty();
  const bool noise_known = std::any_of(ctx.judgement.timing.begin(), ctx.judgement.timing.end(),
                                       [](const TimingComparison& c) { return c.noise.has_value(); });
  const bool finished_plain =
      ctx.judgement.outcome == Outcome::kClean || ctx.judgement.outcome == Outcome::kDegraded;
  if (const TimingComparison* doubt = clean_in_doubt(ctx)) {
    char widths[96];
    std::snprintf(widths, sizeof widths, "the noise (\u00b1%.0f%%) is wider than the %.0f%% margin",
                  *doubt->noise * 100, ctx.expect.margin() * 100);
    return result(
        "outcome", Answer::kUnknown,
        said + "; " + widths + " of the " + doubt->statistic +
            ", so clean and degraded cannot be told apart: " + doubt->how_to_decide(ctx.expect.margin()));
  }
  for (Outcome w : ctx.expect.outcomes) {
    if (w != ctx.judgement.outcome) continue;
    // clean vs degraded is only as good as the noise estimate behind it.
    if (finished_plain && timed && !noise_known) {
      return result("outcome", Answer::kUnknown, said + "; the baseline's noise could not be estimated");
    }
    return result("outcome", Answer::kPass, said);
  }
  for (Outcome w : ctx.expect.outcomes) {
    if (w == Outcome::kDegraded && ctx.judgement.outcome == Outcome::kClean &&
        ctx.history.baselines.empty()) {
      return result("outcome", Answer::kUnknown, said + "; no baseline run to tell clean from degraded");
    }
    if ((w == Outcome::kDegraded || w == Outcome::kClean) && finished_plain && timed && !noise_known) {
      return result("outcome", Answer::kUnknown, said + "; the baseline's noise could not be estimated");
    }
  }
  return result("outcome", Answer::kFail, said);
}

CheckResult check_detected_by(const CheckContext& ctx) {
  const auto& allowed = ctx.expect.detected_by;
  const auto& first = ctx.judgement.first_detection;
  if (!first) {
    return result("detected_by", Answer::kFail,
                  "expected a first detection by " + join(allowed, " or ") + ", nothing detected the fault");
  }
  // Detections with the same timestamp as the first count as first together.
  std::vector<std::string> firsts;
  const detail::DetectionWindow window = detail::detection_window(ctx.history);
  for (const auto& d : ctx.history.detections) {
    if (d.ts_ns == first->ts_ns && window.counts(d) &&
        std::find(firsts.begin(), firsts.end(), d.mechanism) == firsts.end()) {
      firsts.push_back(d.mechanism);
    }
  }
  if (firsts.empty()) firsts.push_back(first->mechanism);
  for (const auto& m : firsts) {
    if (std::find(allowed.begin(), allowed.end(), m) != allowed.end()) {
      return result("detected_by", Answer::kPass,
                    "first detection " + describe_detection(*first, ctx) + " is one of " + join(allowed));
    }
  }
  return result("detected_by", Answer::kFail,
                "expected a first detection by " + join(allowed, " or ") + ", first was " +
                    describe_detection(*first, ctx) + " (" + first->evidence.substr(0, 160) + ")");
}

CheckResult check_detection_s(const CheckContext& ctx) {
  const Bounds& want_bounds = *ctx.expect.detection_s;
  const std::string want = "detection time " + bounds_text(want_bounds, true);
  if (!ctx.judgement.first_detection)
    return result("detection_s", Answer::kFail, "expected " + want + ", nothing detected");
  if (!ctx.judgement.first_injection_ns || !ctx.judgement.detection_s) {
    return result("detection_s", Answer::kUnknown,
                  "expected " + want + ", but no injection was recorded to measure from");
  }
  const double t = *ctx.judgement.detection_s;
  const std::string said = "expected " + want + " after the first injection, observed " + fmt_s(t) + " (" +
                           ctx.judgement.first_detection->mechanism + "; " + first_injection_text(ctx) + ")";
  return result("detection_s", want_bounds.contains(t) ? Answer::kPass : Answer::kFail, said);
}

CheckResult check_ranks(const CheckContext& ctx) {
  const std::set<int> saw = detail::ranks_that_detected(ctx.history);
  const std::string saw_text = ranks_text(saw);
  const RankExpectation& expected = *ctx.expect.ranks;
  std::vector<int> required;
  std::string want;
  if (expected.kind == RankExpectation::Kind::kAny) {
    return result("ranks", saw.empty() ? Answer::kFail : Answer::kPass,
                  "expected any rank to see the failure, ranks that did: " + saw_text);
  }
  if (expected.kind == RankExpectation::Kind::kAll) {
    if (ctx.history.world_size <= 0) {
      return result("ranks", Answer::kUnknown, "expected all ranks to see the failure, world size unknown");
    }
    for (int r = 0; r < ctx.history.world_size; ++r) required.push_back(r);
    want = "all " + std::to_string(ctx.history.world_size) + " ranks";
  } else {
    required = expected.ranks;
    want = "ranks " + nlohmann::json(expected.ranks).dump();
  }
  std::vector<int> missing;
  for (int r : required) {
    if (!saw.count(r)) missing.push_back(r);
  }
  const std::string said = "expected " + want + " to see the failure, ranks that did: " + saw_text;
  if (!missing.empty()) return result("ranks", Answer::kFail, said + "; missing " + ranks_text(missing));
  return result("ranks", Answer::kPass, said);
}

CheckResult check_restarts(const CheckContext& ctx) {
  const Bounds& want = *ctx.expect.restarts;
  const int n = ctx.judgement.restarts;
  const std::string said = "expected restarts " + bounds_text(want, false) + ", observed " +
                           std::to_string(n) + " (harness " +
                           std::to_string(std::max(0, ctx.history.attempts - 1)) + ", torchrun " +
                           std::to_string(detail::torchrun_restarts(ctx.history)) + ")";
  return result("restarts", want.contains(n) ? Answer::kPass : Answer::kFail, said);
}

// In-place recovery: both checks need one that counts (judge.h, in_place_problem); else they say why not.
std::string no_recovery_text(const CheckContext& ctx) {
  if (!ctx.judgement.survivors) return "no rank recovered in place (no `recovered` event)";
  return "the in-place recovery does not count: " + ctx.judgement.in_place_problem;
}

CheckResult check_resume_s(const CheckContext& ctx) {
  const Bounds& want = *ctx.expect.resume_s;
  const std::string expected = "expected the survivors to resume within " + bounds_text(want, true) +
                               " of the " + first_injection_text(ctx);
  if (!ctx.judgement.resume_s || !ctx.judgement.in_place_problem.empty())
    return result("resume_s", Answer::kFail, expected + "; " + no_recovery_text(ctx));
  const double s = *ctx.judgement.resume_s;
  return result("resume_s", want.contains(s) ? Answer::kPass : Answer::kFail,
                expected + ", observed " + fmt_s(s) + " (the last survivor's first step after its recovery)");
}

CheckResult check_survivors(const CheckContext& ctx) {
  const int want = *ctx.expect.survivors;
  const std::string expected = "expected " + std::to_string(want) + " survivor(s) to carry on";
  if (!ctx.judgement.survivors || !ctx.judgement.in_place_problem.empty())
    return result("survivors", Answer::kFail, expected + "; " + no_recovery_text(ctx));
  const int n = *ctx.judgement.survivors;
  return result("survivors", n == want ? Answer::kPass : Answer::kFail,
                expected + ", observed " + std::to_string(n));
}

// RAS names the culprits of a hang: the ranks missing from its report or lagging in operation count.
// The expectation is the exact set, so a probe that also blamed a healthy rank fails.
CheckResult check_ras_ranks(const CheckContext& ctx) {
  const std::set<int>& want = *ctx.expect.ras_ranks;
  const HistoryEvent* report = nullptr;
  for (const auto& e : ctx.history.events) {
    if (e.source == "ras" && e.event == "ras_report") report = &e;  // the latest probe wins
  }
  if (report == nullptr) {
    return result("ras_ranks", Answer::kUnknown,
                  "no RAS report: the job ended before the probe (at three quarters of the deadline)");
  }
  if (!report->fields.value("ok", false)) {
    return result("ras_ranks", Answer::kUnknown,
                  "the RAS probe got no report: " + report->fields.value("error", std::string()));
  }
  std::set<int> named;
  for (const char* key : {"missing", "lagging"}) {
    if (report->fields.contains(key)) {
      for (const auto& r : report->fields[key]) named.insert(r.get<int>());
    }
  }
  const std::string said =
      "expected RAS to name ranks " + ranks_text(want) + ", it named " + ranks_text(named);
  return result("ras_ranks", named == want ? Answer::kPass : Answer::kFail, said);
}

CheckResult check_log_matches(const CheckContext& ctx) {
  const auto& patterns = ctx.expect.log_matches;
  std::vector<LineRegex> regexes;
  for (const auto& p : patterns) regexes.emplace_back(p);  // validated with the expectation
  std::vector<bool> found(patterns.size(), false);
  size_t files_read = 0;
  for (const auto& attempt_logs : ctx.history.rank_logs) {
    for (const auto& rel : attempt_logs) {
      if (rel.empty()) continue;
      std::filesystem::path path = rel;
      if (path.is_relative() && !ctx.options.run_dir.empty())
        path = std::filesystem::path(ctx.options.run_dir) / rel;
      std::ifstream in(path, std::ios::binary);
      if (!in) continue;
      ++files_read;
      std::string line;
      while (read_bounded_line(in, line, kMaxLineBytes)) {
        for (size_t i = 0; i < regexes.size(); ++i) {
          if (!found[i] && regexes[i].search(line)) found[i] = true;
        }
      }
    }
  }
  if (files_read == 0) return result("log_matches", Answer::kUnknown, "no rank log could be read");
  std::vector<std::string> missing;
  for (size_t i = 0; i < patterns.size(); ++i) {
    if (!found[i]) missing.push_back("/" + patterns[i] + "/");
  }
  if (!missing.empty()) {
    return result("log_matches", Answer::kFail,
                  "no line of " + std::to_string(files_read) + " rank log(s) matches " + join(missing));
  }
  return result("log_matches", Answer::kPass, "every pattern matched a rank log line");
}

CheckResult check_result(const CheckContext& ctx) {
  const int attempt = detail::last_attempt(ctx.history);
  if (std::string bad = detail::corruption_evidence(ctx.history, attempt); !bad.empty()) {
    return result("result", Answer::kFail, "expected verified data, the final attempt saw " + bad);
  }
  std::set<int> verified;
  for (const auto& e : ctx.history.events) {
    if (e.attempt != attempt || e.event != "done" || e.rank < 0) continue;
    auto it = e.fields.find("verified");
    if (it != e.fields.end() && it->is_boolean() && it->get<bool>()) verified.insert(e.rank);
  }
  const int world = ctx.history.world_size;
  if (world > 0 && static_cast<int>(verified.size()) >= world) {
    return result("result", Answer::kPass, "every rank of the final attempt verified its data");
  }
  // Recovered in place: the ranks that carried on are the ones whose data counts.
  if (ctx.judgement.outcome == Outcome::kRecoveredInPlace && ctx.judgement.survivors &&
      static_cast<int>(verified.size()) >= *ctx.judgement.survivors) {
    return result("result", Answer::kPass,
                  "every survivor of the in-place recovery verified its data (" +
                      std::to_string(verified.size()) + " of " + std::to_string(world) + " ranks)");
  }
  if (verified.empty()) {
    return result("result",
                  ctx.judgement.outcome == Outcome::kDetected || ctx.judgement.outcome == Outcome::kHung
                      ? Answer::kFail
                      : Answer::kUnknown,
                  "expected verified data, no rank reported done with verified=true");
  }
  return result("result", Answer::kFail,
                "expected verified data, only " + std::to_string(verified.size()) + " of " +
                    std::to_string(world) + " ranks reported verified=true");
}

// "fired 1 time(s): delay-1 x1, drop x0 (+250 more counted, not held)": how often each armed fault fired,
// so a fault that fired once where it was meant to fire on every call shows in the check itself.
std::string firings_text(const History& history) {
  std::map<std::string, int64_t> firings;
  for (const auto& id : history.armed_faults) firings[id] = 0;
  int64_t total = 0;
  for (const auto& e : history.events) {
    if (e.event != ev::kInject) continue;
    ++total;
    if (const auto id = e.fields.find("fault_id"); id != e.fields.end() && id->is_string())
      ++firings[id->get<std::string>()];
  }
  int64_t folded = 0;
  for (const auto& f : history.folded) {
    if (f.event == ev::kInject) folded += f.count;
  }
  std::string text = "fired " + std::to_string(total + folded) + " time(s):";
  for (const auto& [id, n] : firings) text += " " + id + " x" + std::to_string(n) + ",";
  text.pop_back();
  if (folded > 0) text += " (+" + std::to_string(folded) + " more counted, not held)";
  return text;
}

std::optional<CheckResult> check_injection(const CheckContext& ctx) {
  const auto& armed = ctx.history.armed_faults;
  if (armed.empty()) return std::nullopt;
  const std::string faults = std::to_string(armed.size()) + " fault(s) armed (" + join(armed) + ")";
  if (!ctx.judgement.first_injection_ns) {
    std::string said = "no fault was injected: " + faults + ", no inject event in the run";
    // A host that refused (outside the drill's allow-list) is why: the verdict says so.
    std::set<std::string> refusals;
    for (const auto& e : ctx.history.events) {
      if (e.event != ev::kRefused) continue;
      auto text = [&e](const char* key) {
        const auto it = e.fields.find(key);
        return it != e.fields.end() && it->is_string() ? it->get<std::string>() : std::string();
      };
      const std::string host = text("host").empty() ? e.host : text("host");
      const std::string why =
          !text("why").empty() ? text("why") : "not in the allowed hosts (" + text("allowed") + ")";
      refusals.insert(host + " refused: " + why);
    }
    if (!refusals.empty())
      said += "; " + join(std::vector<std::string>(refusals.begin(), refusals.end()), "; ");
    if (ctx.expect.fault_may_not_fire) {
      return result("injection", Answer::kUnknown, said + " (the scenario allows it: fault_may_not_fire)");
    }
    return result("injection", Answer::kFail, said);
  }
  std::string said = faults + "; " + firings_text(ctx.history) + "; " + first_injection_text(ctx);
  if (const std::string why = unauthenticated_injections(ctx.history); !why.empty())
    said += "; read from the events file, not authenticated: " + why;
  return result("injection", Answer::kPass, said);
}

std::optional<CheckResult> check_before_the_fault(const CheckContext& ctx) {
  const std::string before =
      detail::detections_before_the_fault(ctx.history, detail::detection_window(ctx.history));
  if (before.empty()) return std::nullopt;
  return result("before_fault", Answer::kPass,
                "detected before the fault, so not counted as its detection: " + before + " (" +
                    first_injection_text(ctx) + ")");
}

std::optional<CheckResult> check_events_contract(const CheckContext& ctx) {
  const auto& errors = ctx.history.contract_errors;
  if (errors.empty()) return std::nullopt;
  std::string said = "events that break the events contract were left out of the timeline:";
  for (const auto& e : errors) {
    said += " " + e.source + " rank " + std::to_string(e.rank) + ": " + e.problem + " (" +
            std::to_string(e.count) + " line(s), first: " + e.line + ");";
  }
  said.pop_back();
  return result("events", Answer::kUnknown, said);
}

std::optional<CheckResult> check_records(const CheckContext& ctx) {
  const auto& lost = ctx.history.records_lost;
  if (lost.empty()) return std::nullopt;
  return result("records", Answer::kUnknown, "the run's records are incomplete: " + join(lost, "; "));
}

// The ranks' own word that the GPU refused them, under ncclfi's MPS (the log classifier's
// `cuda_unavailable` evidence), at most kMaxRefusals lines.
std::vector<std::string> refused_ranks(const History& history) {
  constexpr size_t kMaxRefusals = 4;
  std::vector<std::string> lines;
  if (!history.own_mps) return lines;
  for (const auto& e : history.events) {
    if (lines.size() >= kMaxRefusals) break;
    if (e.source != "log" || e.event != "log_evidence" || !e.fields.is_object() ||
        e.fields.value("label", "") != "cuda_unavailable")
      continue;
    lines.push_back("rank " + std::to_string(e.rank) + ", attempt " + std::to_string(e.attempt) + ": " +
                    e.fields.value("line", ""));
  }
  return lines;
}

std::optional<CheckResult> check_shared_gpu(const CheckContext& ctx) {
  Answer so_far = Answer::kPass;
  for (const auto& c : ctx.judgement.checks) so_far = worst(so_far, c.answer);
  if (so_far != Answer::kFail) return std::nullopt;
  const std::vector<std::string> refusals = refused_ranks(ctx.history);
  if (ctx.history.mps_failures.empty() && refusals.empty()) return std::nullopt;
  std::string said =
      "the failure may be shared-GPU mode's, not the job's: under ncclfi's MPS daemon a client killed in the "
      "middle of GPU work hands an error to the next client that connects (docs/failure-signatures.md, "
      "section 8)";
  if (!ctx.history.mps_failures.empty())
    said += "; the MPS server said: " + join(ctx.history.mps_failures, "; ");
  if (!refusals.empty()) said += "; the ranks said: " + join(refusals, "; ");
  CheckResult r = result("shared_gpu", Answer::kUnknown, said);
  r.excuses_failure = true;
  return r;
}

}  // namespace ncclfi::harness
