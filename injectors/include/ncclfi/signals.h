// The signals a fault may kill a process with: one table, used by the plan validator, the preload
// (`crash`), the harness (`proc kill`) and `ncclfi list faults`. Only signals whose default action
// ends the process are accepted, so "the process dies by that signal" holds for every accepted value
// (the preload restores the default action and unblocks the signal before raising it). A plan names
// one by number, by its name ("SIGKILL") or by its name without "SIG" ("KILL"); the realtime signals
// SIGRTMIN..SIGRTMAX by number only (their numbers are chosen by the C library at run time).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ncclfi {

struct SignalInfo {
  int number;
  std::string_view name;    // "SIGKILL"
  std::string_view action;  // the default action: "terminate" or "core dump"
};

// The named signals accepted, in number order.
std::span<const SignalInfo> fatal_signals();

// Signals refused with the reason (they stop, continue or are ignored by default).
struct RefusedSignal {
  int number;
  std::string_view name;
  std::string_view why;
};
std::span<const RefusedSignal> refused_signals();

// The realtime range, SIGRTMIN..SIGRTMAX on this C library.
int realtime_min();
int realtime_max();

// Every accepted signal number (the named ones, then the realtime range).
std::vector<int> accepted_signal_numbers();

// The outcome of reading a plan's `signal`: the number, or why it is not accepted.
struct SignalLookup {
  std::optional<int> number;
  std::string refusal;  // set when `number` is empty: "SIGSTOP stops the process ..." or ""
};
SignalLookup signal_from_name(std::string_view name);
SignalLookup signal_from_int(long long value);

// "SIGKILL", or "SIGRTMIN+3" for a realtime signal, or "signal N".
std::string signal_name(int number);

}  // namespace ncclfi
