// One fuzz input through the scenario loader (text -> bounded JSON -> schema -> faults -> rules), with
// the invariants every input must keep. Shared by the libFuzzer target (scenario_loader_fuzz.cc) and
// the corpus replay test (tests/unit/harness), so the saved corpus is checked on every build.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "scenario.h"

namespace ncclfi::fuzz {

enum class ScenarioInput { kRejected, kAccepted };

[[noreturn]] inline void scenario_invariant_broken(const char* what, const std::string& detail) {
  std::fprintf(stderr, "scenario fuzz invariant broken: %s: %s\n", what, detail.c_str());
  std::abort();
}

// Loads `data` as a scenario file. Any exception other than ScenarioError escapes (a bug the fuzzer
// reports); a broken invariant aborts.
inline ScenarioInput check_scenario_input(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const cli::Scenario s = cli::scenario_from_text(text, "fuzz.json");
    if (s.name.empty() || s.workload.ranks < 1 || !(s.deadline_s > 0))
      scenario_invariant_broken("accepted", s.name);
    return ScenarioInput::kAccepted;
  } catch (const cli::ScenarioError& e) {
    // Every problem names the file and a pointer; the message holds no raw control character.
    if (e.problems().empty()) scenario_invariant_broken("no problem", e.what());
    const std::string message = e.what();
    if (message.rfind("fuzz.json: ", 0) != 0) scenario_invariant_broken("file", message);
    for (const char c : message) {
      if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t')
        scenario_invariant_broken("raw byte", message);
    }
    for (const auto& p : e.problems()) {
      if (!p.pointer.empty() && p.pointer[0] != '/') scenario_invariant_broken("pointer", p.pointer);
    }
    return ScenarioInput::kRejected;
  }
}

}  // namespace ncclfi::fuzz
