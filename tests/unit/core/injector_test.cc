// The Injector: plan from disk through hand-made Params, layer filtering, install() on FaultPoints,
// the gate, and the inject event it records.
#include <unistd.h>

#include <array>
#include <atomic>
#include <thread>

#include <gtest/gtest.h>

#include "ncclfi/injector.h"
#include "test_support.h"

namespace ncclfi {
namespace {

using nlohmann::json;
using test::fault_json;
using test::plan_json;

Params params_for(const test::TempDir& dir, const json& plan, int rank = 0, int world_size = 4) {
  test::write_text(dir.file("plan.json"), plan.dump());
  Params p;
  p.plan_path = dir.file("plan.json");
  p.events_path = dir.file("events.jsonl");
  p.run_dir = dir.path();
  p.rank = rank;
  p.world_size = world_size;
  p.attempt = 2;
  return p;
}

json mixed_plan() {
  json api_error = fault_json("api-err", "api", "error");
  api_error["params"] = {{"code", "ncclRemoteError"}};
  api_error["target"] = {{"ranks", {0}}, {"ops", json::array({"allreduce"})}};
  api_error["trigger"] = {{"after_calls", 2}, {"count", 2}};
  json api_hang = fault_json("api-hang", "api", "hang");
  api_hang["target"] = {{"ranks", {{"random", 2}, {"seed", 3}}}, {"ops", json::array({"send"})}};
  json net_drop = fault_json("net-drop", "net", "drop");
  json proc_kill = fault_json("proc-kill", "proc", "kill");
  return plan_json({api_error, net_drop, api_hang, proc_kill});
}

TEST(Injector, NoPlanIsInert) {
  Params p;
  Injector injector(p, Layer::kApi, "preload");
  EXPECT_TRUE(injector.inert());
  EXPECT_TRUE(injector.faults().empty());
  EXPECT_TRUE(injector.load_error().empty());
  EXPECT_FALSE(injector.events().enabled());
}

TEST(Injector, KeepsOnlyItsLayerAndResolvesRandomRanks) {
  test::TempDir dir;
  Injector api(params_for(dir, mixed_plan()), Layer::kApi, "preload");
  ASSERT_EQ(api.faults().size(), 2u);
  EXPECT_EQ(api.faults()[0]->fault().id, "api-err");
  EXPECT_EQ(api.faults()[1]->fault().id, "api-hang");
  const Target& hang = api.faults()[1]->fault().target;
  EXPECT_EQ(hang.rank_select, Target::RankSelect::kList);  // resolved for a world of 4
  Target random;
  random.rank_select = Target::RankSelect::kRandom;
  random.random_count = 2;
  random.random_seed = 3;
  EXPECT_EQ(hang.ranks, random.resolve_ranks(4));
  Injector net(params_for(dir, mixed_plan()), Layer::kNet, "net");
  ASSERT_EQ(net.faults().size(), 1u);
  EXPECT_EQ(net.faults()[0]->fault().id, "net-drop");
  Injector proc(params_for(dir, mixed_plan()), Layer::kProc, "harness");
  ASSERT_EQ(proc.faults().size(), 1u);
  EXPECT_EQ(proc.faults()[0]->fault().kind, "kill");
}

TEST(Injector, ABadPlanLeavesItInertWithTheError) {
  test::TempDir dir;
  json bad = plan_json({fault_json()});
  bad["faults"][0]["trigger"] = {{"after_calls", "ten"}};
  Injector injector(params_for(dir, bad), Layer::kApi, "preload");
  EXPECT_TRUE(injector.inert());
  EXPECT_EQ(
      injector.load_error(),
      dir.file("plan.json") + ": /faults/0/trigger/after_calls: expected a positive integer, got \"ten\"");
}

TEST(Injector, InstallAttachesFaultsToTheirPointsAndFires) {
  test::TempDir dir;
  Injector injector(params_for(dir, mixed_plan()), Layer::kApi, "preload");
  FaultPoint allreduce("nccl/coll/allreduce");
  FaultPoint broadcast("nccl/coll/broadcast");
  std::array<FaultPoint*, 2> points{&allreduce, &broadcast};
  injector.install(points);
  EXPECT_TRUE(gate_open());
  CallSite rank0{.rank = 0, .world_size = 4, .comm = 0, .op = "allreduce", .bytes = 64};
  CallSite rank1 = rank0;
  rank1.rank = 1;
  EXPECT_EQ(allreduce.check(rank1), nullptr);  // not a target rank: not even counted
  EXPECT_EQ(allreduce.check(rank0), nullptr);  // call 1 < after_calls 2
  const ArmedFault* fired = allreduce.check(rank0);
  ASSERT_NE(fired, nullptr);
  EXPECT_EQ(fired->fault().id, "api-err");
  EXPECT_EQ(test::action_as<FailWithCode>(fired->fault()).code, NcclError::kRemoteError);
  EXPECT_NE(allreduce.check(rank0), nullptr);  // count 2
  EXPECT_EQ(allreduce.check(rank0), nullptr);
  EXPECT_EQ(fired->matching_calls(), 4u);
  EXPECT_EQ(broadcast.check(rank0), nullptr);  // no fault of the plan targets broadcast
}

TEST(Injector, RecordInjectionWritesAnInjectEvent) {
  test::TempDir dir;
  Injector injector(params_for(dir, mixed_plan(), 0, 4), Layer::kApi, "preload");
  FaultPoint allreduce("nccl/coll/allreduce");
  std::array<FaultPoint*, 1> points{&allreduce};
  injector.install(points);
  CallSite site{.rank = 0,
                .world_size = 4,
                .comm = 1,
                .op = "allreduce",
                .peer = 3,
                .direction = Direction::kSend,
                .bytes = 4096};
  EXPECT_EQ(allreduce.check(site), nullptr);
  const ArmedFault* fired = allreduce.check(site);
  ASSERT_NE(fired, nullptr);
  injector.record_injection(*fired, allreduce.name(), site, json{{"code", 6}});
  auto lines = test::read_lines(dir.file("events.jsonl"));
  ASSERT_EQ(lines.size(), 1u);
  json e = json::parse(lines[0]);
  EXPECT_EQ(e["event"], "inject");
  EXPECT_EQ(e["source"], "preload");
  EXPECT_EQ(e["rank"], 0);
  EXPECT_EQ(e["pid"], static_cast<int>(::getpid()));
  EXPECT_EQ(e["fault_id"], "api-err");
  EXPECT_EQ(e["kind"], "error");
  EXPECT_EQ(e["layer"], "api");
  EXPECT_EQ(e["point"], "nccl/coll/allreduce");
  EXPECT_EQ(e["call"], 2);
  EXPECT_EQ(e["firing"], 1);
  EXPECT_EQ(e["attempt"], 2);
  EXPECT_EQ(e["op"], "allreduce");
  EXPECT_EQ(e["peer"], 3);
  EXPECT_EQ(e["bytes"], 4096);
  EXPECT_EQ(e["comm"], 1);
  EXPECT_EQ(e["direction"], "send");
  EXPECT_EQ(e["code"], 6);
  EXPECT_TRUE(e["ts_ns"].is_number_integer());
  EXPECT_TRUE(e["mono_ns"].is_number_integer());
}

TEST(Injector, RecordInjectionFallsBackToTheProcessRank) {
  test::TempDir dir;
  json plan = plan_json({fault_json("any", "net", "drop")});
  Injector injector(params_for(dir, plan, 3, 4), Layer::kNet, "net");
  FaultPoint isend("net/isend");
  std::array<FaultPoint*, 1> points{&isend};
  injector.install(points);
  CallSite site{.op = "isend"};  // the shim does not know the rank per call
  const ArmedFault* fired = isend.check(site);
  ASSERT_NE(fired, nullptr);
  injector.record_injection(*fired, isend.name(), site);
  json e = json::parse(test::read_lines(dir.file("events.jsonl")).at(0));
  EXPECT_EQ(e["rank"], 3);
  EXPECT_EQ(e["source"], "net");
  EXPECT_FALSE(e.contains("peer"));
  EXPECT_FALSE(e.contains("bytes"));
}

TEST(Injector, CheckFiresExactlyCountTimesFrom8Threads) {
  test::TempDir dir;
  json f = fault_json("threads", "net", "error");
  f["target"] = {{"ops", json::array({"isend"})}, {"min_bytes", 8}};
  f["trigger"] = {{"after_calls", 5000}, {"count", 1000}};
  Injector injector(params_for(dir, plan_json({f})), Layer::kNet, "net");
  FaultPoint isend("net/isend");
  std::array<FaultPoint*, 1> points{&isend};
  injector.install(points);
  std::atomic<uint64_t> fired{0};
  std::atomic<uint64_t> first_call{~0ULL};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      CallSite site{.rank = 0, .op = "isend", .peer = t, .bytes = static_cast<uint64_t>(t % 2 == 0 ? 64 : 4)};
      for (int i = 0; i < 100000; ++i) {
        if (isend.check(site) == nullptr) continue;
        fired.fetch_add(1);
        uint64_t call = ArmedFault::last_call_on_this_thread();
        uint64_t seen = first_call.load();
        while (call < seen && !first_call.compare_exchange_weak(seen, call)) {
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(fired.load(), 1000u);
  EXPECT_EQ(first_call.load(), 5000u);
  EXPECT_EQ(injector.faults()[0]->matching_calls(), 400000u);  // the 4 threads under min_bytes never match
}

// The gate is process-wide and never closes again once opened, so these run in children that start
// with the gate closed, as a fresh process does (a fork inherits the parent's open gate when the whole
// binary runs in one process).
TEST(InjectorGate, ClosedWhenInert) {
  EXPECT_EQ(test::run_in_child([] {
              g_any_armed.store(false);
              Injector injector(Params{}, Layer::kApi, "preload");
              FaultPoint point("nccl/coll/allreduce");
              std::array<FaultPoint*, 1> points{&point};
              injector.install(points);
              return (!gate_open() && point.check(CallSite{}) == nullptr) ? 0 : 1;
            }),
            0);
}

TEST(InjectorGate, ClosedWhenThePlanHasNoFaultForThisLayer) {
  test::TempDir dir;
  Params p = params_for(dir, plan_json({fault_json("n", "net", "drop")}));
  EXPECT_EQ(test::run_in_child([&] {
              g_any_armed.store(false);
              Injector injector(p, Layer::kApi, "preload");
              FaultPoint point("nccl/coll/allreduce");
              std::array<FaultPoint*, 1> points{&point};
              injector.install(points);
              return (injector.inert() && !gate_open()) ? 0 : 1;
            }),
            0);
}

TEST(InjectorGate, ClosedWhenNoInstalledPointCarriesAFault) {
  test::TempDir dir;
  json f = fault_json("only-send", "api", "error");
  f["target"] = {{"ops", json::array({"send"})}};
  Params p = params_for(dir, plan_json({f}));
  EXPECT_EQ(test::run_in_child([&] {
              g_any_armed.store(false);
              Injector injector(p, Layer::kApi, "preload");
              FaultPoint allreduce("nccl/coll/allreduce");
              std::array<FaultPoint*, 1> points{&allreduce};
              injector.install(points);
              if (injector.inert() || gate_open()) return 1;
              FaultPoint send("nccl/p2p/send");
              std::array<FaultPoint*, 1> more{&send};
              injector.install(more);
              return gate_open() && send.check(CallSite{.rank = 0}) != nullptr ? 0 : 2;
            }),
            0);
}

TEST(InjectorGate, InstanceReadsTheEnvironmentOnce) {
  test::TempDir dir;
  test::write_text(dir.file("plan.json"), plan_json({fault_json("env", "api", "skip")}).dump());
  std::string plan = dir.file("plan.json");
  std::string events = dir.file("ev.jsonl");
  EXPECT_EQ(test::run_in_child([&] {
              ::setenv("NCCLFI_PLAN", plan.c_str(), 1);
              ::setenv("NCCLFI_EVENTS", events.c_str(), 1);
              ::setenv("NCCLFI_RANK", "1", 1);
              Injector& a = Injector::instance(Layer::kApi, "preload");
              Injector& b = Injector::instance(Layer::kApi, "preload");
              if (&a != &b || a.faults().size() != 1 || a.params().rank != 1) return 1;
              if (!Injector::instance(Layer::kNet, "net").inert()) return 2;
              return a.events().enabled() ? 0 : 3;
            }),
            0);
}

}  // namespace
}  // namespace ncclfi
