// Where a running suite stands, as the attempt loop reports it and the console draws it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace ncclfi::harness {

struct ProgressState {
  size_t index = 0;  // 1-based position of the scenario in the suite
  size_t total = 0;  // scenarios in the suite
  std::string scenario;
  size_t repeat = 0, repeats = 0;  // `run --repeat`: this run's number among the scenario's runs (0: once)
  std::string pass;                // "baseline" or "faulted"
  int round = 0, rounds = 0;       // a timing verdict's round and the most it may take (0: no rounds)
  int attempt = 0;
  int ranks_running = 0;
  int ranks_total = 0;
  double elapsed_s = 0;  // of this attempt
  double deadline_s = 0;
  int injections = 0;
  std::vector<std::string> detections;  // mechanisms seen so far
  std::string phase;                    // "starting", "running", "teardown", "judging"
  double suite_elapsed_s = -1;          // since the suite began (<0: not known)
  std::optional<double> eta_s;          // the suite's remaining time, estimated
};

}  // namespace ncclfi::harness
