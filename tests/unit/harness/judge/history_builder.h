// Small builders for judge tests: histories with events, exits and detections at given seconds.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "history.h"
#include "ncclfi/fault_kinds.h"

namespace ncclfi::harness::testing {

// A per-process scratch directory under the temp dir, removed when the test program ends.
inline std::filesystem::path scratch_root() {
  static const std::filesystem::path root = [] {
    auto p = std::filesystem::temp_directory_path() / ("ncclfi_judge_" + std::to_string(::getpid()));
    std::filesystem::create_directories(p);
    static struct Cleanup {
      std::filesystem::path path;
      ~Cleanup() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
      }
    } cleanup{p};
    return p;
  }();
  return root;
}

inline constexpr int64_t kT0 = 1'700'000'000'000'000'000;  // a wall-clock origin
inline int64_t at(double seconds) {
  return kT0 + static_cast<int64_t>(seconds * 1e9);
}

inline History make_history(int world_size) {
  History h;
  h.scenario = "test";
  h.world_size = world_size;
  h.start_ns = kT0;
  h.end_ns = at(10);
  return h;
}

inline void add_event(History& h, double s, int rank, const std::string& source, const std::string& event,
                      nlohmann::json fields = nlohmann::json::object(), int attempt = 0) {
  HistoryEvent e;
  e.ts_ns = at(s);
  e.rank = rank;
  e.attempt = attempt;
  e.source = source;
  e.event = event;
  e.fields = std::move(fields);
  h.events.push_back(std::move(e));
}

// An inject event of `kind`, on the first layer that has a kind of that name (as the front end of that
// layer writes it: the judge reads a kind by its layer and name).
inline void add_inject(History& h, double s, int rank, const std::string& kind = "drop", int attempt = 0) {
  std::string layer = "net";
  for (const FaultKindSpec* spec : fault_kinds()) {
    if (spec->kind == kind) {
      layer = to_string(spec->layer);
      break;
    }
  }
  add_event(h, s, rank, "net", "inject", {{"fault_id", "f1"}, {"kind", kind}, {"layer", layer}}, attempt);
}

inline void add_exit(History& h, double s, int rank, std::optional<int> code, std::optional<int> signal = {},
                     bool by_harness = false, int attempt = 0) {
  RankExit x;
  x.rank = rank;
  x.attempt = attempt;
  x.pid = 1000 + rank;
  x.exit_code = code;
  x.signal = signal;
  x.killed_by_harness = by_harness;
  x.ts_ns = at(s);
  h.exits.push_back(x);
}

inline void add_detection(History& h, double s, int rank, const std::string& mechanism, int attempt = 0) {
  h.detections.push_back(Detection{mechanism, rank, attempt, at(s), "test evidence"});
}

inline void all_exit(History& h, double s, int code, int attempt = 0) {
  for (int r = 0; r < h.world_size; ++r) add_exit(h, s, r, code, {}, false, attempt);
}

inline void all_done(History& h, double s, bool verified, int attempt = 0, double seconds = 5.0) {
  for (int r = 0; r < h.world_size; ++r) {
    add_event(h, s, r, "workload", "done", {{"iters", 10}, {"seconds", seconds}, {"verified", verified}},
              attempt);
  }
}

// Step durations around `centre_s`, spread evenly over +-`spread` (relative), in a fixed shuffled order.
inline std::vector<double> steps_around(double centre_s, double spread, size_t n) {
  std::vector<double> out;
  for (size_t i = 0; i < n; ++i) {
    const double position = n > 1 ? static_cast<double>((i * 7) % n) / static_cast<double>(n - 1) : 0.5;
    out.push_back(centre_s * (1 - spread + 2 * spread * position));
  }
  return out;
}

// One op event per step (seq 0..n-1) on every rank, each rank reporting the same duration.
inline void add_steps(History& h, const std::vector<double>& steps_s, int attempt = 0) {
  for (size_t i = 0; i < steps_s.size(); ++i) {
    for (int r = 0; r < std::max(1, h.world_size); ++r) {
      add_event(h, 0.1 + 0.01 * static_cast<double>(i), r, "workload", "op",
                {{"seq", i}, {"op", "allreduce"}, {"dur_us", steps_s[i] * 1e6}}, attempt);
    }
  }
}

}  // namespace ncclfi::harness::testing
