// The effects layer: what the three injection front ends (the preload on NCCL's API, the net-plugin shim
// and the verbs wrapper) share once a fault fired, so that a kind with the same action behaves the same in
// every layer:
//   - the draws an effect makes (a delay's jitter, the bits or elements a corruption alters), each a pure
//     function of (seed, fault id, firing): the same plan gives the same delays and the same flipped bits
//     in every layer, on every host, whatever the threads (Delay::draw, corrupt_seed, flip_bits);
//   - the words of an inject event that says a fault fired but changed nothing ("effect": "none: why"),
//     which the judge does not count as an injection;
//   - guarded(), the one exception barrier at the edge of every call a front end takes from NCCL or its
//     caller: our own failure is reported and the call goes on, and nothing is thrown across a C ABI.
#pragma once

#include <cxxabi.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ncclfi/fault_action.h"

namespace ncclfi {

// ---- draws ----

// The seed of one corruption's choices (which bits flip, which elements change): the action's own seed
// when the plan gave one, else the fault's (ArmedFault::seed), mixed with the fault's id and the firing, so
// every firing alters other bits and two faults with the same seed alter different ones.
uint64_t corrupt_seed(std::optional<uint64_t> own_seed, uint64_t fault_seed, std::string_view fault_id,
                      uint64_t firing);
// A corruption seed as a draw in [0, 1) (the preload's choice of the first altered element).
double corrupt_draw(uint64_t corrupt_seed);

// Flips exactly min(nbits, 8*bytes) distinct bits of data[0, bytes), chosen from `seed` (corrupt_seed).
// Returns the positions flipped, ascending. Host memory only; the net shim copies device bytes through it.
std::vector<uint64_t> flip_bits(void* data, size_t bytes, uint64_t nbits, uint64_t seed);

// ---- "effect": "none: why" ----

// The reasons a front end gives when a fault fired and changed nothing; others come from the code that
// tried (a CUDA driver error, a missing symbol).
namespace no_effect {
inline constexpr std::string_view kOpFailed = "the op failed";
inline constexpr std::string_view kNoBufferOnThisRank = "the op writes no buffer on this rank";
inline constexpr std::string_view kNoCommunicator = "the call has no communicator";
inline constexpr std::string_view kNoReceiveBuffer = "not an op with a receive buffer";
inline constexpr std::string_view kNoStream = "not an op with a stream";
inline constexpr std::string_view kNotAConnection = "not a connection to the bootstrap";
// An action the kind registry never lets fire at this point (a bug if it ever shows).
std::string cannot_act_at(std::string_view kind, std::string_view point);
}  // namespace no_effect

// Marks an inject event's fields as "fired, changed nothing": "effect": "none: <why>".
void mark_no_effect(nlohmann::json& extra, std::string_view why);
// Whether an inject event's "effect" says the fault changed nothing (the judge's test).
bool is_no_effect(std::string_view effect);

// ---- the exception barrier ----

// How a front end reports an exception its barrier stopped: `where` is the call, `what` the message.
using InternalErrorReport = void (*)(const char* where, const char* what) noexcept;

// One line on stderr, "ncclfi <front_end>: internal error in <where>: <what>", at most 8 per process (a
// failure on every call must not flood the job's output). The preload's and the verbs wrapper's report.
void report_internal_error(const char* front_end, const char* where, const char* what) noexcept;

// Runs `body` and returns what it returns. An exception stops here: `report` says where, and `fallback`
// is returned instead (for a call NCCL made, the answer that lets the job go on: the call unfaulted, or
// an error code it handles). A thread being cancelled unwinds on through (abi::__forced_unwind).
template <typename Result, typename Body>
Result guarded(InternalErrorReport report, const char* where, Result fallback, Body&& body) {
  try {
    return body();
  } catch (abi::__forced_unwind&) {
    throw;
  } catch (const std::exception& e) {
    report(where, e.what());
  } catch (...) {
    report(where, "an exception of unknown type");
  }
  return fallback;
}

// The same for a body that returns nothing.
template <typename Body>
void guarded(InternalErrorReport report, const char* where, Body&& body) {
  guarded(report, where, 0, [&] {
    body();
    return 0;
  });
}

}  // namespace ncclfi
