// What a scenario expects, parsed and validated once: the scenario loader turns its problems into
// file/pointer errors before anything launches; the judge reads only the typed fields (a problem that
// reaches the judge, from a hand-written expectation, answers unknown for its field).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace ncclfi::harness {

// kRecovered: restarted (by a relaunch) and finished; kRecoveredInPlace: the survivors of a peer's death
// shrank their communicator and finished without a relaunch (ncclfi-workload --recover shrink).
enum class Outcome { kClean, kDegraded, kDetected, kHung, kSilentCorruption, kRecovered, kRecoveredInPlace };
std::string_view to_string(Outcome outcome);  // "clean", "degraded", ...
std::optional<Outcome> outcome_from_string(std::string_view name);

// {min, max}: either may be absent.
struct Bounds {
  std::optional<double> min, max;
  bool contains(double v) const { return !(min && v < *min) && !(max && v > *max); }
};

struct RankExpectation {
  enum class Kind { kAny, kAll, kList } kind = Kind::kAny;
  std::vector<int> ranks;  // kList
};

struct Expectation {
  // The relative slow-down a `degraded` run must exceed (besides the noise floor) unless the
  // scenario sets degraded_margin.
  static constexpr double kDefaultDegradedMargin = 0.20;
  // Declared so that Expectation is no aggregate: judge(h, {{"outcome", "hung"}}) then means JSON.
  Expectation() = default;

  nlohmann::json doc = nlohmann::json::object();  // as written (reports show it)
  std::vector<Outcome> outcomes;                  // any of these; empty: outcome not checked
  std::vector<std::string> detected_by;           // empty: not checked
  std::optional<Bounds> detection_s;
  std::optional<RankExpectation> ranks;
  std::optional<Bounds> restarts;
  // recovered_in_place: seconds from the harness's injection to the first step every survivor completed
  // after the recovery, and how many ranks carried on (checked exactly).
  std::optional<Bounds> resume_s;
  std::optional<int> survivors;
  std::optional<std::set<int>> ras_ranks;
  std::vector<std::string> log_matches;  // ECMAScript regexes
  bool result_verified = false;          // "result": "verified"
  std::optional<double> degraded_margin;
  // The scenario allows its faults not to fire (a probabilistic trigger): a run without any
  // injection is then `unknown`, not `fail`.
  bool fault_may_not_fire = false;

  // A field that could not be parsed: the loader reports it; the judge answers unknown for it.
  struct Problem {
    std::string field;  // top-level expect field
    std::string pointer;
    std::string expected;
    std::string found;
  };
  std::vector<Problem> problems;

  bool empty() const { return doc.empty(); }
  double margin() const { return degraded_margin.value_or(kDefaultDegradedMargin); }
  // Whether judging needs a fault-free baseline (an outcome of clean or degraded): the one rule.
  bool needs_baseline() const;
  const Problem* problem_for(const std::string& field) const;
};

// Parses `doc` (the scenario's `expect` object). Never throws: what cannot be read lands in
// problems, with pointers under `pointer_prefix` ("/expect").
Expectation parse_expectation(const nlohmann::json& doc, const std::string& pointer_prefix = "/expect");

// The fields the judge knows (each is a check, except the settings degraded_margin and
// fault_may_not_fire).
bool is_expect_setting(std::string_view field);

// "detected(workload_watchdog) 2.5-5s verified": the expectation in a table cell.
std::string expected_summary(const Expectation& expect);

}  // namespace ncclfi::harness
