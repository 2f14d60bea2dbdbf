// One fuzz input through the plan parser, with the invariants every input must keep. Shared by the
// libFuzzer target (plan_parser_fuzz.cc) and the corpus replay unit test (tests/unit/core), so CI
// checks the corpus on every build without clang.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "ncclfi/bounded_input.h"
#include "ncclfi/fault_kinds.h"
#include "ncclfi/plan.h"

namespace ncclfi::fuzz {

enum class PlanInput { kNotJson, kRejected, kAccepted };

[[noreturn]] inline void invariant_broken(const char* what, const std::string& detail) {
  std::fprintf(stderr, "plan fuzz invariant broken: %s: %s\n", what, detail.c_str());
  std::abort();
}

// Parses `data` as JSON and then as a plan. Any exception other than PlanError escapes (a bug the
// fuzzer reports); a broken invariant aborts.
inline PlanInput check_plan_input(const uint8_t* data, size_t size) {
  nlohmann::json doc = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return PlanInput::kNotJson;
  FaultPlan plan;
  try {
    plan = parse_plan(doc, "fuzz.json");
  } catch (const PlanError& e) {
    // Every rejection names the file and a JSON pointer, and its text is built from its parts.
    if (e.file() != "fuzz.json") invariant_broken("file", e.what());
    if (e.pointer().empty() || e.pointer()[0] != '/') invariant_broken("pointer", e.what());
    if (e.expected().empty() || e.found().empty()) invariant_broken("parts", e.what());
    std::string text = e.file() + ": " + e.pointer() + ": expected " + e.expected() + ", got " + e.found();
    if (printable(text) != e.what()) invariant_broken("message", e.what());
    return PlanInput::kRejected;
  }
  // An accepted plan round-trips through to_json and every fault attaches to at least one point.
  nlohmann::json once = to_json(plan);
  FaultPlan again;
  try {
    again = parse_plan(once, "roundtrip");
  } catch (const PlanError& e) {
    invariant_broken("round trip rejected", e.what());
  }
  if (to_json(again) != once) invariant_broken("round trip changed", once.dump());
  for (const Fault& f : plan.faults) {
    if (points_for_fault(f).empty()) invariant_broken("no point", f.id);
    if (find_fault_kind(f.layer, f.kind) == nullptr) invariant_broken("kind", f.kind);
    auto ranks = f.target.resolve_ranks(8);
    for (int r : ranks) {
      if (r < 0) invariant_broken("rank", f.id);
    }
    // The action was resolved for the fault's own layer.
    if (f.action.index() != static_cast<size_t>(f.layer)) invariant_broken("action layer", f.id);
  }
  return PlanInput::kAccepted;
}

}  // namespace ncclfi::fuzz
