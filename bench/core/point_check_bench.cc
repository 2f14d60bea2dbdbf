// The cost of FaultPoint::check() on the paths where nothing fires:
//   idle       nothing armed in the process (the gate is closed)
//   other      other points armed (the gate is open), this point carries no fault
//   other_rank this point carries a fault that targets another rank
//   not_yet    this point carries a fault that matches but whose after_calls is never reached
// each on 1 and 2 threads sharing the point. `--ncclfi-summary` runs them and prints
//   gate_idle_ns=<idle, 1 thread>
//   gate_armed_miss_ns=<the worse of other_rank and not_yet, 2 threads>
// as per-check CPU time on each thread (Google Benchmark's CPU time per iteration).
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "ncclfi/injector.h"

namespace ncclfi {
namespace {

// The points of the benchmark and the Injector whose plan arms them, built once per process.
struct ArmedSetup {
  std::unique_ptr<Injector> injector;
  FaultPoint other_rank{"nccl/coll/allreduce"};  // a fault for rank 1 only; we call as rank 0
  FaultPoint not_yet{"nccl/coll/broadcast"};     // a fault with after_calls = 10^18
  FaultPoint send{"nccl/p2p/send"};              // armed, so the gate is open
  FaultPoint unarmed{"nccl/coll/reduce"};        // installed by no fault

  ArmedSetup() {
    std::string dir =
        (std::filesystem::temp_directory_path() / ("ncclfi-bench-" + std::to_string(::getpid()))).string();
    std::filesystem::create_directories(dir);
    std::string plan = dir + "/plan.json";
    std::ofstream(plan) << R"({"seed": 1, "faults": [
      {"id": "other-rank", "layer": "api", "kind": "error",
       "target": {"ranks": [1], "ops": ["allreduce"]}},
      {"id": "not-yet", "layer": "api", "kind": "error",
       "target": {"ops": ["broadcast"]}, "trigger": {"after_calls": 1000000000000000000}},
      {"id": "send", "layer": "api", "kind": "delay", "params": {"ms": 0},
       "target": {"ranks": [1], "ops": ["send"]}}]})";
    Params params;
    params.plan_path = plan;
    params.rank = 0;
    params.world_size = 2;
    injector = std::make_unique<Injector>(params, Layer::kApi, "bench");
    std::array<FaultPoint*, 4> points{&other_rank, &not_yet, &send, &unarmed};
    injector->install(points);
    std::filesystem::remove_all(dir);
    if (injector->inert() || !gate_open()) {
      std::fprintf(stderr, "ncclfi-bench-core: the plan did not arm (%s)\n", injector->load_error().c_str());
      std::exit(1);
    }
  }
};

ArmedSetup& armed() {
  static ArmedSetup setup;
  return setup;
}

const CallSite kSite{.rank = 0, .world_size = 2, .comm = 0, .op = "allreduce", .bytes = 1 << 20};

void run_checks(benchmark::State& state, FaultPoint& point) {
  for (auto _ : state) {
    const ArmedFault* fired = point.check(kSite);
    benchmark::DoNotOptimize(fired);
    if (fired != nullptr) state.SkipWithError("a fault fired on a path that must not fire");
  }
}

void BM_PointCheck_Idle(benchmark::State& state) {
  // Nothing armed: a point nobody installed, with the process-wide gate closed for the run. (The gate
  // never closes in a real process once opened; the benchmark closes it to measure the idle path.)
  static FaultPoint idle_point("nccl/coll/allgather");
  armed();
  bool was_open = gate_open();
  if (state.thread_index() == 0) g_any_armed.store(false, std::memory_order_relaxed);
  run_checks(state, idle_point);
  if (state.thread_index() == 0) g_any_armed.store(was_open, std::memory_order_relaxed);
}

void BM_PointCheck_OtherPointsArmed(benchmark::State& state) {
  run_checks(state, armed().unarmed);
}
void BM_PointCheck_ArmedOtherRank(benchmark::State& state) {
  run_checks(state, armed().other_rank);
}
void BM_PointCheck_ArmedAfterCallsNotReached(benchmark::State& state) {
  run_checks(state, armed().not_yet);
}

BENCHMARK(BM_PointCheck_Idle)->Threads(1)->Threads(2);
BENCHMARK(BM_PointCheck_OtherPointsArmed)->Threads(1)->Threads(2);
BENCHMARK(BM_PointCheck_ArmedOtherRank)->Threads(1)->Threads(2);
BENCHMARK(BM_PointCheck_ArmedAfterCallsNotReached)->Threads(1)->Threads(2);

// Collects per-check CPU ns by run name for the summary.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.error_occurred) error = true;
      if (run.run_type == Run::RT_Iteration) ns[run.benchmark_name()] = run.GetAdjustedCPUTime();
    }
    ConsoleReporter::ReportRuns(runs);
  }
  std::map<std::string, double> ns;
  bool error = false;
};

double figure(const SummaryReporter& r, const std::string& name) {
  auto it = r.ns.find(name);
  return it == r.ns.end() ? -1.0 : it->second;
}

}  // namespace
}  // namespace ncclfi

int main(int argc, char** argv) {
  bool summary = false;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--ncclfi-summary") == 0) {
      summary = true;
    } else {
      args.push_back(argv[i]);
    }
  }
  if (summary) {
    static char filter[] =
        "--benchmark_filter=Idle/threads:1|ArmedOtherRank/threads:2|AfterCallsNotReached/threads:2";
    static char min_time[] = "--benchmark_min_time=0.3";
    args.push_back(filter);
    args.push_back(min_time);
  }
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 1;
  if (!summary) {
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
  }
  ncclfi::SummaryReporter reporter;
  // The table goes to stderr; stdout carries only the name=value lines.
  reporter.SetOutputStream(&std::cerr);
  reporter.SetErrorStream(&std::cerr);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  double idle = ncclfi::figure(reporter, "BM_PointCheck_Idle/threads:1");
  double miss = std::max(ncclfi::figure(reporter, "BM_PointCheck_ArmedOtherRank/threads:2"),
                         ncclfi::figure(reporter, "BM_PointCheck_ArmedAfterCallsNotReached/threads:2"));
  if (reporter.error || idle < 0 || miss < 0) {
    std::fprintf(stderr, "ncclfi-bench-core: a benchmark failed\n");
    return 1;
  }
  std::printf("gate_idle_ns=%.2f\ngate_armed_miss_ns=%.2f\n", idle, miss);
  return 0;
}
