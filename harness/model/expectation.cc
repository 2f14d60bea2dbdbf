// parse_expectation(): the one place an `expect` object is read.
#include "expectation.h"

#include <algorithm>
#include <array>
#include <cstdio>

#include "line_regex.h"

namespace ncclfi::harness {
namespace {

constexpr std::array<std::string_view, 7> kOutcomeNames = {
    "clean", "degraded", "detected", "hung", "silent_corruption", "recovered", "recovered_in_place"};

std::string shown(const nlohmann::json& v) {
  std::string s = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return s.size() > 80 ? s.substr(0, 77) + "..." : s;
}

// Reads one field; every reader adds a problem instead of throwing.
class Reader {
 public:
  Reader(Expectation& e, std::string prefix) : e_(e), prefix_(std::move(prefix)) {}

  void problem(const std::string& field, const std::string& sub, const std::string& expected,
               const nlohmann::json& found) {
    e_.problems.push_back({field, prefix_ + "/" + field + sub, expected, shown(found)});
  }

  std::optional<std::vector<std::string>> strings(const std::string& field, const nlohmann::json& v) {
    if (v.is_string()) return std::vector<std::string>{v.get<std::string>()};
    if (v.is_array() && !v.empty() && std::all_of(v.begin(), v.end(), [](auto& x) { return x.is_string(); }))
      return v.get<std::vector<std::string>>();
    problem(field, "", "a string or a non-empty list of strings", v);
    return std::nullopt;
  }

  std::optional<Bounds> bounds(const std::string& field, const nlohmann::json& v, bool integers) {
    if (!v.is_object()) {
      problem(field, "", "{\"min\": n, \"max\": n}", v);
      return std::nullopt;
    }
    Bounds b;
    for (const char* key : {"min", "max"}) {
      if (!v.contains(key)) continue;
      const auto& x = v[key];
      if (!x.is_number() || (integers && !x.is_number_integer()) || x.get<double>() < 0) {
        problem(field, std::string("/") + key, integers ? "a whole number >= 0" : "a number >= 0", x);
        return std::nullopt;
      }
      (key[1] == 'i' ? b.min : b.max) = x.get<double>();
    }
    if (b.min && b.max && *b.min > *b.max) {
      problem(field, "/max", "max >= min", v["max"]);
      return std::nullopt;
    }
    return b;
  }

  std::optional<std::vector<int>> ranks(const std::string& field, const nlohmann::json& v) {
    if (!v.is_array()) return std::nullopt;
    std::vector<int> out;
    for (size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_number_integer() || v[i].get<int>() < 0) {
        problem(field, "/" + std::to_string(i), "a rank number", v[i]);
        return std::nullopt;
      }
      out.push_back(v[i].get<int>());
    }
    return out;
  }

 private:
  Expectation& e_;
  std::string prefix_;
};

}  // namespace

std::string_view to_string(Outcome outcome) {
  return kOutcomeNames[static_cast<size_t>(outcome)];
}

std::optional<Outcome> outcome_from_string(std::string_view name) {
  for (size_t i = 0; i < kOutcomeNames.size(); ++i) {
    if (kOutcomeNames[i] == name) return static_cast<Outcome>(i);
  }
  return std::nullopt;
}

bool is_expect_setting(std::string_view field) {
  return field == "degraded_margin" || field == "fault_may_not_fire";
}

bool Expectation::needs_baseline() const {
  return std::any_of(outcomes.begin(), outcomes.end(),
                     [](Outcome o) { return o == Outcome::kClean || o == Outcome::kDegraded; });
}

const Expectation::Problem* Expectation::problem_for(const std::string& field) const {
  for (const auto& p : problems) {
    if (p.field == field) return &p;
  }
  return nullptr;
}

Expectation parse_expectation(const nlohmann::json& doc, const std::string& pointer_prefix) {
  Expectation e;
  if (!doc.is_object()) {
    if (!doc.is_null()) e.problems.push_back({"", pointer_prefix, "an object", shown(doc)});
    return e;
  }
  e.doc = doc;
  Reader read(e, pointer_prefix);
  for (const auto& [field, v] : doc.items()) {
    if (field == "outcome") {
      if (auto names = read.strings(field, v)) {
        for (const auto& n : *names) {
          if (auto o = outcome_from_string(n)) {
            e.outcomes.push_back(*o);
          } else {
            read.problem(field, "",
                         "an outcome (clean, degraded, detected, hung, silent_corruption, recovered, "
                         "recovered_in_place)",
                         n);
            e.outcomes.clear();
            break;
          }
        }
      }
    } else if (field == "detected_by") {
      if (auto names = read.strings(field, v)) e.detected_by = *names;
    } else if (field == "detection_s") {
      e.detection_s = read.bounds(field, v, false);
    } else if (field == "restarts") {
      e.restarts = read.bounds(field, v, true);
    } else if (field == "resume_s") {
      e.resume_s = read.bounds(field, v, false);
    } else if (field == "survivors") {
      if (v.is_number_integer() && v.get<int64_t>() >= 1 && v.get<int64_t>() <= 1 << 20) {
        e.survivors = v.get<int>();
      } else {
        read.problem(field, "", "a whole number of ranks >= 1", v);
      }
    } else if (field == "ranks") {
      if (v == "any" || v == "all") {
        e.ranks = RankExpectation{v == "any" ? RankExpectation::Kind::kAny : RankExpectation::Kind::kAll, {}};
      } else if (auto list = read.ranks(field, v)) {
        e.ranks = RankExpectation{RankExpectation::Kind::kList, *list};
      } else if (!e.problem_for(field)) {
        read.problem(field, "", "\"all\", \"any\" or a list of ranks", v);
      }
    } else if (field == "ras_ranks") {
      if (auto list = read.ranks(field, v)) {
        e.ras_ranks = std::set<int>(list->begin(), list->end());
      } else if (!e.problem_for(field)) {
        read.problem(field, "", "a list of ranks", v);
      }
    } else if (field == "log_matches") {
      if (auto patterns = read.strings(field, v)) {
        for (const auto& p : *patterns) {
          if (auto error = LineRegex::check(p)) {
            read.problem(field, "", "a valid RE2 regular expression (" + *error + ")",
                         p.substr(0, kMaxPatternBytes));
          }
        }
        if (!e.problem_for(field)) e.log_matches = *patterns;
      }
    } else if (field == "result") {
      if (v == "verified") {
        e.result_verified = true;
      } else {
        read.problem(field, "", "\"verified\"", v);
      }
    } else if (field == "degraded_margin") {
      if (v.is_number() && v.get<double>() > 0) {
        e.degraded_margin = v.get<double>();
      } else {
        read.problem(field, "", "a number > 0", v);
      }
    } else if (field == "fault_may_not_fire") {
      if (v.is_boolean()) {
        e.fault_may_not_fire = v.get<bool>();
      } else {
        read.problem(field, "", "true or false", v);
      }
    } else {
      read.problem(field, "", "a known expect field",
                   nlohmann::json("no checker for expect field \"" + field + "\""));
    }
  }
  return e;
}

std::string expected_summary(const Expectation& e) {
  if (e.empty()) return "-";
  std::string s;
  for (Outcome o : e.outcomes) s += (s.empty() ? "" : "|") + std::string(to_string(o));
  if (!e.detected_by.empty()) {
    std::string m;
    for (const auto& x : e.detected_by) m += (m.empty() ? "" : "|") + x;
    s += "(" + m + ")";
  }
  if (e.detection_s) {
    auto num = [](std::optional<double> v) {
      if (!v) return std::string();
      char buf[32];
      std::snprintf(buf, sizeof buf, "%g", *v);
      return std::string(buf);
    };
    const auto& r = *e.detection_s;  // "4-7s", "<=2s", ">=1s": never a bare "-2s" that reads negative
    if (r.min && r.max)
      s += " " + num(r.min) + "-" + num(r.max) + "s";
    else if (r.max)
      s += " <=" + num(r.max) + "s";
    else if (r.min)
      s += " >=" + num(r.min) + "s";
  }
  if (e.resume_s && e.resume_s->max) {
    char buf[32];
    std::snprintf(buf, sizeof buf, " resume<=%gs", *e.resume_s->max);
    s += buf;
  }
  if (e.survivors) s += " survivors=" + std::to_string(*e.survivors);
  if (e.result_verified) s += " verified";
  return s.empty() ? e.doc.dump() : s;
}

}  // namespace ncclfi::harness
