// The accepted and refused signals. A signal is accepted only when its default action ends the
// process (terminate, or terminate with a core dump): a plan that asks a rank to die by a signal must
// get a dead rank. Stop/continue/ignore signals are refused with the reason.
#include "ncclfi/signals.h"

#include <csignal>

namespace ncclfi {
namespace {

constexpr std::string_view kTerm = "terminate";
constexpr std::string_view kCore = "core dump";

constexpr SignalInfo kFatal[] = {
    {SIGHUP, "SIGHUP", kTerm},       {SIGINT, "SIGINT", kTerm},   {SIGQUIT, "SIGQUIT", kCore},
    {SIGILL, "SIGILL", kCore},       {SIGTRAP, "SIGTRAP", kCore}, {SIGABRT, "SIGABRT", kCore},
    {SIGBUS, "SIGBUS", kCore},       {SIGFPE, "SIGFPE", kCore},   {SIGKILL, "SIGKILL", kTerm},
    {SIGUSR1, "SIGUSR1", kTerm},     {SIGSEGV, "SIGSEGV", kCore}, {SIGUSR2, "SIGUSR2", kTerm},
    {SIGPIPE, "SIGPIPE", kTerm},     {SIGALRM, "SIGALRM", kTerm}, {SIGTERM, "SIGTERM", kTerm},
    {SIGSTKFLT, "SIGSTKFLT", kTerm}, {SIGXCPU, "SIGXCPU", kCore}, {SIGXFSZ, "SIGXFSZ", kCore},
    {SIGVTALRM, "SIGVTALRM", kTerm}, {SIGPROF, "SIGPROF", kTerm}, {SIGIO, "SIGIO", kTerm},
    {SIGPWR, "SIGPWR", kTerm},       {SIGSYS, "SIGSYS", kCore},
};

constexpr std::string_view kStops = "its default action stops the process (use a proc stop fault)";
constexpr std::string_view kIgnored = "its default action ignores it: the process would not die";

constexpr RefusedSignal kRefused[] = {
    {SIGCHLD, "SIGCHLD", kIgnored},
    {SIGCONT, "SIGCONT", "its default action continues a stopped process: the process would not die"},
    {SIGSTOP, "SIGSTOP", kStops},
    {SIGTSTP, "SIGTSTP", kStops},
    {SIGTTIN, "SIGTTIN", kStops},
    {SIGTTOU, "SIGTTOU", kStops},
    {SIGURG, "SIGURG", kIgnored},
    {SIGWINCH, "SIGWINCH", kIgnored},
};

SignalLookup refuse(std::string text) {
  return SignalLookup{std::nullopt, std::move(text)};
}

}  // namespace

std::span<const SignalInfo> fatal_signals() {
  return kFatal;
}

std::span<const RefusedSignal> refused_signals() {
  return kRefused;
}

int realtime_min() {
  return SIGRTMIN;
}

int realtime_max() {
  return SIGRTMAX;
}

std::vector<int> accepted_signal_numbers() {
  std::vector<int> numbers;
  for (const auto& s : kFatal) numbers.push_back(s.number);
  for (int n = realtime_min(); n <= realtime_max(); ++n) numbers.push_back(n);
  return numbers;
}

SignalLookup signal_from_int(long long value) {
  for (const auto& s : kFatal) {
    if (s.number == value) return {s.number, ""};
  }
  if (value >= realtime_min() && value <= realtime_max()) return {static_cast<int>(value), ""};
  for (const auto& r : kRefused) {
    if (r.number == value) return refuse(std::string(r.name) + ": " + std::string(r.why));
  }
  return refuse("");
}

SignalLookup signal_from_name(std::string_view name) {
  std::string full = name.substr(0, 3) == "SIG" ? std::string(name) : "SIG" + std::string(name);
  for (const auto& s : kFatal) {
    if (s.name == full) return {s.number, ""};
  }
  for (const auto& r : kRefused) {
    if (r.name == full) return refuse(std::string(r.name) + ": " + std::string(r.why));
  }
  return refuse("");
}

std::string signal_name(int number) {
  for (const auto& s : kFatal) {
    if (s.number == number) return std::string(s.name);
  }
  for (const auto& r : kRefused) {
    if (r.number == number) return std::string(r.name);
  }
  if (number >= realtime_min() && number <= realtime_max()) {
    return number == realtime_min() ? "SIGRTMIN" : "SIGRTMIN+" + std::to_string(number - realtime_min());
  }
  return "signal " + std::to_string(number);
}

}  // namespace ncclfi
