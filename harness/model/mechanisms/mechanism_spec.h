// A detection mechanism: what noticed a fault. One file per mechanism in this folder declares its
// MechanismSpec (the output lines, exit code or harness event that mean it, and where the docs explain
// it); mechanism_list.h lists the files. The scenario validator, the rank-output classifier, the
// exit-status observer, `ncclfi list mechanisms` and the docs' table all read the list, so a new
// mechanism is its file plus one line in mechanism_list.h.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace ncclfi::harness {

// What a line of the signature catalogue tells the judge.
enum class SignatureRole {
  kDetection,  // a mechanism noticed the fault (the line's mechanism)
  kEvidence,   // a fact for the timeline and the diagnosis, labelled, never a detection by itself
  kRestart,    // a launcher restarted the job's ranks
};

// One line that real software prints when something fails: an entry of the signature catalogue. A
// mechanism's own lines (MechanismSpec::lines) are detections by that mechanism; a family's lines
// (signatures/) say by `role` and `implies` what they are. The fields after `example` say where the
// format comes from; the docs' catalogue (failure-signatures.md) is made of them.
struct SignatureLine {
  std::string_view id{};            // shown in reports and timelines, e.g. "torch.watchdog_timeout"
  std::string_view regex{};         // RE2, searched in the line's first bytes (line_regex.h)
  std::string_view must_contain{};  // a literal every match holds: a cheap prefilter ("" = none)
  std::string_view shown{};         // the line as the docs show it, e.g. "PyTorch's `NCCL error in: `"
  std::string_view example{};       // a whole line as the source prints it; tests classify it as `id`
  SignatureRole role = SignatureRole::kDetection;
  std::string_view implies{};     // a detection's mechanism or an evidence's label; "" = the owner mechanism
  std::string_view format{};      // the source's own format string, verbatim ("" where it is not one call)
  std::string_view versions{};    // the releases that print it, e.g. "NCCL 2.19 to 2.28.6"
  std::string_view cited{};       // where the format is: repository, file (and function)
  std::string_view reported{};    // a public report that quotes a real line of it ("" = none found)
  std::string_view meaning{};     // what it says happened
  std::string_view site{};        // the fault site it points to (signature_sites()), "" = any
  std::string_view printed_by{};  // who prints it: "the failing rank", "its peers", "the launcher", ...
};

struct MechanismSpec {
  std::string_view name{};             // what expect.detected_by and a detection use, e.g. "torch_watchdog"
  std::string_view noticed_by{};       // what noticed the fault, as a sentence fragment for the docs
  std::string_view source{};           // the software whose output, exit status or report it is
  std::string_view events{};           // the event-log events that produce it (markdown), "" = none
  std::optional<int> exit_code{};      // the workload contract's exit code that means it
  std::vector<SignatureLine> lines{};  // tried in this order, mechanisms in mechanism_list.h's order
  std::string_view doc{};              // where the docs explain what prints it: "file.md#anchor"
};

// Every mechanism, in the order their lines are tried (the first match decides: keep the more specific
// lines first).
const std::vector<const MechanismSpec*>& mechanism_specs();
const MechanismSpec* find_mechanism(std::string_view name);
// The mechanism a workload's exit code means (workload_contract.h), or "" when none.
std::string mechanism_for_exit_code(int code);
// The table of docs/outcomes.md ("Detection mechanisms"), generated from the specs.
std::string mechanism_catalogue_markdown();
// The same as JSON (`ncclfi list mechanisms --json`): one object per mechanism, with its lines' regexes.
nlohmann::json mechanism_catalogue_json();

}  // namespace ncclfi::harness
