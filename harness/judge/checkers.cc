// One checker per `expect` field. Each answers pass, fail or unknown with a reason that says what
// was expected and what was observed. A checker may throw (bad expect value): judge() turns that
// into unknown.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <stdexcept>

#include "judge.h"
#include "judge_internal.h"

namespace ncclfi::harness {
namespace {

std::string fmt_s(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3fs", seconds);
  return buf;
}

std::vector<std::string> string_list(const nlohmann::json& v, const char* field) {
  if (v.is_string()) return {v.get<std::string>()};
  if (!v.is_array())
    throw std::invalid_argument(std::string(field) + ": expected a string or a list of strings");
  std::vector<std::string> out;
  for (const auto& item : v) {
    if (!item.is_string()) throw std::invalid_argument(std::string(field) + ": expected strings");
    out.push_back(item.get<std::string>());
  }
  return out;
}

std::string join(const std::vector<std::string>& items, const char* sep = ", ") {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : sep) + i;
  return s;
}

// {min, max} bounds; either may be absent. Throws on a non-object or non-number bound.
std::pair<std::optional<double>, std::optional<double>> bounds(const nlohmann::json& v, const char* field) {
  if (!v.is_object()) throw std::invalid_argument(std::string(field) + ": expected {\"min\": n, \"max\": n}");
  std::optional<double> lo, hi;
  if (v.contains("min")) {
    if (!v["min"].is_number()) throw std::invalid_argument(std::string(field) + "/min: expected a number");
    lo = v["min"].get<double>();
  }
  if (v.contains("max")) {
    if (!v["max"].is_number()) throw std::invalid_argument(std::string(field) + "/max: expected a number");
    hi = v["max"].get<double>();
  }
  return {lo, hi};
}

std::string bounds_text(std::optional<double> lo, std::optional<double> hi, bool seconds) {
  auto f = [&](double x) { return seconds ? fmt_s(x) : std::to_string(static_cast<long long>(x)); };
  if (lo && hi) return "[" + f(*lo) + ", " + f(*hi) + "]";
  if (lo) return ">= " + f(*lo);
  if (hi) return "<= " + f(*hi);
  return "any";
}

CheckResult result(const char* field, Answer answer, std::string reason) {
  return CheckResult{field, answer, std::move(reason)};
}

std::string describe_detection(const Detection& d, const Judgement& j) {
  std::string s = d.mechanism;
  if (d.rank >= 0) s += " on rank " + std::to_string(d.rank);
  if (j.detection_s) s += " at +" + fmt_s(*j.detection_s);
  return s;
}

}  // namespace

CheckResult check_outcome(const nlohmann::json& expected, const CheckContext& ctx) {
  const auto wanted = string_list(expected, "outcome");
  for (const auto& w : wanted) {
    if (!outcome_from_string(w)) throw std::invalid_argument("outcome: unknown outcome \"" + w + "\"");
  }
  const std::string observed(to_string(ctx.judgement.outcome));
  const std::string said = "expected " + join(wanted, " or ") + ", observed " + observed + " (" +
                           ctx.judgement.outcome_reason + ")";
  for (const auto& w : wanted) {
    if (w == observed) return result("outcome", Answer::kPass, said);
  }
  const bool no_baseline = !ctx.history.baseline_total_s && !ctx.history.baseline_slowest_step_s;
  const bool observed_finished_plain = ctx.judgement.outcome == Outcome::kClean;
  for (const auto& w : wanted) {
    if (w == "degraded" && observed_finished_plain && no_baseline) {
      return result("outcome", Answer::kUnknown, said + "; no baseline run to tell clean from degraded");
    }
  }
  return result("outcome", Answer::kFail, said);
}

CheckResult check_detected_by(const nlohmann::json& expected, const CheckContext& ctx) {
  const auto allowed = string_list(expected, "detected_by");
  const auto& first = ctx.judgement.first_detection;
  if (!first) {
    return result("detected_by", Answer::kFail,
                  "expected a first detection by " + join(allowed, " or ") + ", nothing detected the fault");
  }
  // Detections with the same timestamp as the first count as first together.
  std::vector<std::string> firsts;
  const auto teardown = detail::teardown_start_ns(ctx.history);
  for (const auto& d : ctx.history.detections) {
    if (d.ts_ns == first->ts_ns && detail::counts(d, teardown) &&
        std::find(firsts.begin(), firsts.end(), d.mechanism) == firsts.end()) {
      firsts.push_back(d.mechanism);
    }
  }
  if (firsts.empty()) firsts.push_back(first->mechanism);
  for (const auto& m : firsts) {
    if (std::find(allowed.begin(), allowed.end(), m) != allowed.end()) {
      return result(
          "detected_by", Answer::kPass,
          "first detection " + describe_detection(*first, ctx.judgement) + " is one of " + join(allowed));
    }
  }
  return result("detected_by", Answer::kFail,
                "expected a first detection by " + join(allowed, " or ") + ", first was " +
                    describe_detection(*first, ctx.judgement) + " (" + first->evidence.substr(0, 160) + ")");
}

CheckResult check_detection_s(const nlohmann::json& expected, const CheckContext& ctx) {
  auto [lo, hi] = bounds(expected, "detection_s");
  const std::string want = "detection time " + bounds_text(lo, hi, true);
  if (!ctx.judgement.first_detection)
    return result("detection_s", Answer::kFail, "expected " + want + ", nothing detected");
  if (!ctx.judgement.first_injection_ns || !ctx.judgement.detection_s) {
    return result("detection_s", Answer::kUnknown,
                  "expected " + want + ", but no injection was recorded to measure from");
  }
  const double t = *ctx.judgement.detection_s;
  const std::string said =
      "expected " + want + ", observed " + fmt_s(t) + " (" + ctx.judgement.first_detection->mechanism + ")";
  if ((lo && t < *lo) || (hi && t > *hi)) return result("detection_s", Answer::kFail, said);
  return result("detection_s", Answer::kPass, said);
}

CheckResult check_ranks(const nlohmann::json& expected, const CheckContext& ctx) {
  const std::set<int> saw = detail::ranks_that_detected(ctx.history);
  const std::string saw_text = detail::ranks_text(saw);
  std::vector<int> required;
  std::string want;
  if (expected.is_string() && expected.get<std::string>() == "any") {
    return result("ranks", saw.empty() ? Answer::kFail : Answer::kPass,
                  "expected any rank to see the failure, ranks that did: " + saw_text);
  } else if (expected.is_string() && expected.get<std::string>() == "all") {
    if (ctx.history.world_size <= 0) {
      return result("ranks", Answer::kUnknown, "expected all ranks to see the failure, world size unknown");
    }
    for (int r = 0; r < ctx.history.world_size; ++r) required.push_back(r);
    want = "all " + std::to_string(ctx.history.world_size) + " ranks";
  } else if (expected.is_array()) {
    for (const auto& r : expected) {
      if (!r.is_number_integer())
        throw std::invalid_argument("ranks: expected \"all\", \"any\" or a list of ranks");
      required.push_back(r.get<int>());
    }
    want = "ranks " + expected.dump();
  } else {
    throw std::invalid_argument("ranks: expected \"all\", \"any\" or a list of ranks");
  }
  std::vector<int> missing;
  for (int r : required) {
    if (!saw.count(r)) missing.push_back(r);
  }
  const std::string said = "expected " + want + " to see the failure, ranks that did: " + saw_text;
  if (!missing.empty())
    return result("ranks", Answer::kFail, said + "; missing " + detail::ranks_text(missing));
  return result("ranks", Answer::kPass, said);
}

CheckResult check_restarts(const nlohmann::json& expected, const CheckContext& ctx) {
  auto [lo, hi] = bounds(expected, "restarts");
  const int n = ctx.judgement.restarts;
  const std::string said = "expected restarts " + bounds_text(lo, hi, false) + ", observed " +
                           std::to_string(n) + " (harness " +
                           std::to_string(std::max(0, ctx.history.attempts - 1)) + ", torchrun " +
                           std::to_string(detail::torchrun_restarts(ctx.history)) + ")";
  if ((lo && n < *lo) || (hi && n > *hi)) return result("restarts", Answer::kFail, said);
  return result("restarts", Answer::kPass, said);
}

// RAS names the culprits of a hang: the ranks missing from its report or lagging in operation count.
// The expectation is the exact set, so a probe that also blamed a healthy rank fails.
CheckResult check_ras_ranks(const nlohmann::json& expected, const CheckContext& ctx) {
  if (!expected.is_array()) throw std::invalid_argument("ras_ranks: expected a list of ranks");
  std::set<int> want;
  for (const auto& r : expected) {
    if (!r.is_number_integer()) throw std::invalid_argument("ras_ranks: expected a list of ranks");
    want.insert(r.get<int>());
  }
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
      "expected RAS to name ranks " + detail::ranks_text(want) + ", it named " + detail::ranks_text(named);
  return result("ras_ranks", named == want ? Answer::kPass : Answer::kFail, said);
}

CheckResult check_log_matches(const nlohmann::json& expected, const CheckContext& ctx) {
  const auto patterns = string_list(expected, "log_matches");
  std::vector<std::regex> regexes;
  for (const auto& p : patterns) regexes.emplace_back(p, std::regex::ECMAScript);  // throws: unknown
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
      while (std::getline(in, line)) {
        for (size_t i = 0; i < regexes.size(); ++i) {
          if (!found[i] && std::regex_search(line, regexes[i])) found[i] = true;
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

CheckResult check_result(const nlohmann::json& expected, const CheckContext& ctx) {
  if (!expected.is_string() || expected.get<std::string>() != "verified") {
    throw std::invalid_argument("result: expected \"verified\"");
  }
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

}  // namespace ncclfi::harness
