// Plan parsing: every field of plan, fault, target and trigger, the defaults, and the round trip
// through to_json.
#include <csignal>

#include <gtest/gtest.h>

#include "ncclfi/fault_kinds.h"
#include "ncclfi/plan.h"
#include "test_support.h"

namespace ncclfi {
namespace {

using nlohmann::json;
using test::fault_json;
using test::plan_json;

TEST(PlanParse, DefaultsOfPlanFaultTargetTrigger) {
  FaultPlan plan = parse_plan(json{{"faults", json::array({fault_json()})}}, "p.json");
  EXPECT_EQ(plan.seed, 1u);
  EXPECT_FALSE(plan.control);
  ASSERT_EQ(plan.faults.size(), 1u);
  const Fault& f = plan.faults[0];
  EXPECT_EQ(f.id, "f0");
  EXPECT_EQ(f.layer, Layer::kApi);
  EXPECT_EQ(f.kind, "error");
  EXPECT_TRUE(f.params.is_object());
  EXPECT_TRUE(f.params.empty());
  EXPECT_EQ(f.target.rank_select, Target::RankSelect::kAll);
  EXPECT_TRUE(f.target.ranks.empty());
  EXPECT_TRUE(f.target.ops.empty());
  EXPECT_FALSE(f.target.peer.has_value());
  EXPECT_EQ(f.target.direction, Direction::kAny);
  EXPECT_EQ(f.target.min_bytes, 0u);
  EXPECT_FALSE(f.target.comm.has_value());
  EXPECT_EQ(f.trigger.after_calls, 1u);
  EXPECT_EQ(f.trigger.after_ms, 0u);
  EXPECT_DOUBLE_EQ(f.trigger.probability, 1.0);
  EXPECT_EQ(f.trigger.seed, 0u);
  EXPECT_EQ(f.trigger.count, 1u);
  EXPECT_TRUE(f.trigger.armed);
}

TEST(PlanParse, VerbsTargetsOneHcaAndPortAndRoundTrips) {
  json f = test::fault_json("p2", "verbs", "retry_exceeded");
  f["target"] = {{"device", "mlx5_1"}, {"port", 2}, {"direction", "send"}};
  const FaultPlan plan = parse_plan(plan_json({f}), "p.json");
  EXPECT_EQ(plan.faults[0].target.device, "mlx5_1");
  EXPECT_EQ(plan.faults[0].target.port, 2);
  const json back = to_json(plan.faults[0]);
  EXPECT_EQ(back["target"]["device"], "mlx5_1");
  EXPECT_EQ(back["target"]["port"], 2);
  const FaultPlan again = parse_plan(plan_json({back}), "p.json");
  EXPECT_EQ(again.faults[0].target.port, 2);
  const FaultPlan plain = parse_plan(plan_json({test::fault_json("x", "verbs", "drop")}), "p.json");
  EXPECT_FALSE(plain.faults[0].target.device.has_value());
  EXPECT_FALSE(plain.faults[0].target.port.has_value());
}

TEST(PlanParse, EmptyFaultListIsAValidPlan) {
  FaultPlan plan = parse_plan(json{{"version", 1}, {"faults", json::array()}}, "p.json");
  EXPECT_TRUE(plan.faults.empty());
}

TEST(PlanParse, EveryFieldIsRead) {
  json f = fault_json("net-corrupt.1", "net", "corrupt");
  f["summary"] = "flip two bits of big receives from rank 3";
  f["params"] = {{"bits", 2}, {"seed", 11}};
  f["target"] = {{"ranks", {0, 2}},   {"ops", json::array({"irecv"})},
                 {"peer", 3},         {"direction", "recv"},
                 {"min_bytes", 4096}, {"comm", 1}};
  f["trigger"] = {{"after_calls", 10}, {"after_ms", 250}, {"probability", 0.5},
                  {"seed", 99},        {"count", 0},      {"armed", false}};
  json doc = {{"version", 1}, {"seed", 42}, {"control", true}, {"faults", {f}}};
  FaultPlan plan = parse_plan(doc, "p.json");
  EXPECT_EQ(plan.seed, 42u);
  EXPECT_TRUE(plan.control);
  const Fault& got = plan.faults.at(0);
  EXPECT_EQ(got.id, "net-corrupt.1");
  EXPECT_EQ(got.layer, Layer::kNet);
  EXPECT_EQ(got.kind, "corrupt");
  const auto& bits = test::action_as<CorruptBits>(got);
  EXPECT_EQ(bits.bits, 2u);
  EXPECT_EQ(bits.seed, 11u);
  EXPECT_EQ(got.target.rank_select, Target::RankSelect::kList);
  EXPECT_EQ(got.target.ranks, (std::vector<int>{0, 2}));
  EXPECT_EQ(got.target.ops, (std::vector<std::string>{"irecv"}));
  EXPECT_EQ(got.target.peer, 3);
  EXPECT_EQ(got.target.direction, Direction::kRecv);
  EXPECT_EQ(got.target.min_bytes, 4096u);
  EXPECT_EQ(got.target.comm, 1);
  EXPECT_EQ(got.trigger.after_calls, 10u);
  EXPECT_EQ(got.trigger.after_ms, 250u);
  EXPECT_DOUBLE_EQ(got.trigger.probability, 0.5);
  EXPECT_EQ(got.trigger.seed, 99u);
  EXPECT_EQ(got.trigger.count, 0u);
  EXPECT_FALSE(got.trigger.armed);
}

TEST(PlanParse, RankSelectors) {
  json all = fault_json("a");
  all["target"] = {{"ranks", "all"}};
  json random = fault_json("r");
  random["target"] = {{"ranks", {{"random", 2}, {"seed", 5}}}};
  json random_noseed = fault_json("rn");
  random_noseed["target"] = {{"ranks", {{"random", 1}}}};
  FaultPlan plan = parse_plan(plan_json({all, random, random_noseed}), "p.json");
  EXPECT_EQ(plan.faults[0].target.rank_select, Target::RankSelect::kAll);
  EXPECT_EQ(plan.faults[1].target.rank_select, Target::RankSelect::kRandom);
  EXPECT_EQ(plan.faults[1].target.random_count, 2);
  EXPECT_EQ(plan.faults[1].target.random_seed, 5u);
  EXPECT_EQ(plan.faults[2].target.random_count, 1);
  EXPECT_EQ(plan.faults[2].target.random_seed, 0u);
}

TEST(PlanParse, DirectionsAndFractionalAfterMs) {
  json s = fault_json("s", "net", "drop");
  s["target"] = {{"direction", "send"}};
  json a = fault_json("a", "net", "drop");
  a["target"] = {{"direction", "any"}};
  a["trigger"] = {{"after_ms", 1.9}};
  FaultPlan plan = parse_plan(plan_json({s, a}), "p.json");
  EXPECT_EQ(plan.faults[0].target.direction, Direction::kSend);
  EXPECT_EQ(plan.faults[1].target.direction, Direction::kAny);
  EXPECT_EQ(plan.faults[1].trigger.after_ms, 1u);
}

// One valid fault per kind of the catalogue, with its required parameters, parses.
TEST(PlanParse, EveryKindOfTheCatalogueParses) {
  std::vector<json> faults;
  int n = 0;
  for (const FaultKindSpec* kind : fault_kinds()) {
    const FaultKindSpec& spec = *kind;
    json f = fault_json("k" + std::to_string(n++), to_string(spec.layer), std::string(spec.kind));
    json params = json::object();
    for (const ParamSpec& p : spec.params) {
      if (!p.required) continue;
      params[std::string(p.name)] = 5;
    }
    f["params"] = params;
    faults.push_back(f);
  }
  FaultPlan plan = parse_plan(plan_json(faults), "p.json");
  ASSERT_EQ(plan.faults.size(), fault_kinds().size());
  for (size_t i = 0; i < plan.faults.size(); ++i) {
    EXPECT_EQ(plan.faults[i].kind, fault_kinds()[i]->kind);
    EXPECT_FALSE(points_for_fault(plan.faults[i]).empty()) << plan.faults[i].kind;
  }
}

TEST(PlanParse, CodeAndSignalParamsByNumberAndName) {
  json e = fault_json("e", "api", "error");
  e["params"] = {{"code", "ncclRemoteError"}};
  json e2 = fault_json("e2", "net", "error");
  e2["params"] = {{"code", 3}};
  json c = fault_json("c", "api", "crash");
  c["params"] = {{"signal", "SIGSEGV"}};
  json c2 = fault_json("c2", "api", "crash");
  c2["params"] = {{"signal", "KILL"}};
  json k = fault_json("k", "proc", "kill");
  k["params"] = {{"signal", 15}};
  json x = fault_json("x", "api", "crash");
  x["params"] = {{"exit_code", 42}};
  FaultPlan plan = parse_plan(plan_json({e, e2, c, c2, k, x}), "p.json");
  EXPECT_EQ(test::action_as<FailWithCode>(plan.faults[0]).code, NcclError::kRemoteError);
  EXPECT_EQ(test::action_as<FailWithCode>(plan.faults[1]).code, NcclError::kInternalError);
  EXPECT_EQ(test::action_as<DieBySignal>(plan.faults[2]).signal, SIGSEGV);
  EXPECT_EQ(test::action_as<DieBySignal>(plan.faults[3]).signal, SIGKILL);
  EXPECT_EQ(test::action_as<KillProcess>(plan.faults[4]).signal, SIGTERM);
  EXPECT_EQ(test::action_as<ExitWithCode>(plan.faults[5]).code, 42);
}

// Absent parameters take the default their ParamSpec declares (the one docs/faults.md prints).
TEST(PlanParse, AbsentParamsTakeTheDeclaredDefaults) {
  auto only = [](const char* layer, const char* kind, json params = json::object()) {
    json f = fault_json("f", layer, kind);
    f["params"] = std::move(params);
    return parse_plan(plan_json({f}), "p.json").faults.at(0);
  };
  EXPECT_EQ(test::action_as<FailWithCode>(only("api", "error")).code, NcclError::kInternalError);
  EXPECT_EQ(test::action_as<FailWithCode>(only("api", "init_fail")).code, NcclError::kSystemError);
  EXPECT_EQ(test::action_as<AsyncError>(only("api", "async_error")).code, NcclError::kRemoteError);
  EXPECT_EQ(test::action_as<FailWithCode>(only("net", "error")).code, NcclError::kSystemError);
  EXPECT_EQ(test::action_as<ConnectFail>(only("net", "connect_fail")).code, NcclError::kSystemError);
  EXPECT_EQ(test::action_as<RetryExhausted>(only("net", "nic_down")).code, NcclError::kRemoteError);
  EXPECT_EQ(test::action_as<DieBySignal>(only("api", "crash")).signal, SIGABRT);
  EXPECT_EQ(test::action_as<KillProcess>(only("proc", "kill")).signal, SIGKILL);
  EXPECT_FALSE(test::action_as<Hang>(only("api", "hang")).ms.has_value());
  EXPECT_FALSE(test::action_as<Hang>(only("api", "hang", {{"ms", 0}})).ms.has_value());
  EXPECT_EQ(test::action_as<Hang>(only("api", "init_hang", {{"ms", 7}})).ms, 7.0);
  EXPECT_FALSE(test::action_as<GpuHang>(only("api", "gpu_hang")).ms.has_value());
  EXPECT_FALSE(test::action_as<GpuHang>(only("api", "gpu_hang", {{"ms", 0}})).ms.has_value());
  EXPECT_EQ(test::action_as<GpuHang>(only("api", "gpu_hang", {{"ms", 250}})).ms, 250.0);
  EXPECT_FALSE(test::action_as<StopProcess>(only("proc", "stop")).resume_after_ms.has_value());
  const auto delay = test::action_as<Delay>(only("api", "delay", {{"ms", 2.5}}));
  EXPECT_DOUBLE_EQ(delay.ms, 2.5);
  EXPECT_DOUBLE_EQ(delay.jitter_ms, 0);
  const auto corrupt = test::action_as<CorruptElements>(only("api", "corrupt"));
  EXPECT_EQ(corrupt.mode, CorruptMode::kBitflip);
  EXPECT_EQ(corrupt.count, 1u);
  EXPECT_FALSE(corrupt.seed.has_value());
  const auto nan = test::action_as<CorruptElements>(only("api", "corrupt", {{"mode", "nan"}, {"count", 3}}));
  EXPECT_EQ(nan.mode, CorruptMode::kNan);
  EXPECT_EQ(nan.count, 3u);
  EXPECT_EQ(test::action_as<CorruptBits>(only("net", "corrupt")).bits, 1u);
  EXPECT_DOUBLE_EQ(test::action_as<Throttle>(only("net", "throttle", {{"gbps", 2}})).gbps, 2);
  EXPECT_DOUBLE_EQ(test::action_as<Stall>(only("net", "stall", {{"ms", 9}})).ms, 9);
  EXPECT_TRUE(std::holds_alternative<Drop>(std::get<NetAction>(only("net", "drop").action)));
  EXPECT_TRUE(std::holds_alternative<Skip>(std::get<ApiAction>(only("api", "skip").action)));
}

TEST(PlanParse, LayerNames) {
  EXPECT_STREQ(to_string(Layer::kNet), "net");
  EXPECT_STREQ(to_string(Layer::kApi), "api");
  EXPECT_STREQ(to_string(Layer::kProc), "proc");
  EXPECT_STREQ(to_string(Direction::kRecv), "recv");
}

TEST(PlanParse, RoundTripThroughToJson) {
  json f1 = fault_json("one", "net", "delay");
  f1["params"] = {{"ms", 3}, {"jitter_ms", 1.5}};
  f1["target"] = {{"ranks", {1, 3}},
                  {"ops", json::array({"isend", "irecv"})},
                  {"peer", 2},
                  {"direction", "send"},
                  {"min_bytes", 1024}};
  f1["trigger"] = {{"after_calls", 5}, {"after_ms", 20}, {"probability", 0.25},
                   {"seed", 3},        {"count", 0},     {"armed", false}};
  json f2 = fault_json("two", "api", "hang");
  f2["target"] = {{"ranks", {{"random", 2}, {"seed", 9}}}, {"comm", 2}, {"ops", json::array({"allreduce"})}};
  json f3 = fault_json("three", "proc", "stop");
  f3["params"] = {{"ms", 100}};
  FaultPlan plan = parse_plan(json{{"seed", 17}, {"control", true}, {"faults", {f1, f2, f3}}}, "p.json");
  json once = to_json(plan);
  FaultPlan again = parse_plan(once, "roundtrip");
  EXPECT_EQ(to_json(again), once);
  ASSERT_EQ(again.faults.size(), 3u);
  EXPECT_EQ(again.seed, 17u);
  EXPECT_TRUE(again.control);
  EXPECT_EQ(again.faults[0].target.ops, plan.faults[0].target.ops);
  EXPECT_EQ(again.faults[0].target.peer, 2);
  EXPECT_EQ(again.faults[0].target.direction, Direction::kSend);
  EXPECT_EQ(again.faults[0].trigger.after_ms, 20u);
  EXPECT_DOUBLE_EQ(again.faults[0].trigger.probability, 0.25);
  EXPECT_FALSE(again.faults[0].trigger.armed);
  EXPECT_EQ(again.faults[1].target.rank_select, Target::RankSelect::kRandom);
  EXPECT_EQ(again.faults[1].target.random_count, 2);
  EXPECT_EQ(again.faults[1].target.random_seed, 9u);
  EXPECT_EQ(again.faults[1].target.comm, 2);
  EXPECT_EQ(test::action_as<StopProcess>(again.faults[2]).resume_after_ms, 100.0);
  // A single fault serialises to the same object the plan holds.
  EXPECT_EQ(to_json(plan.faults[2]), once["faults"][2]);
}

TEST(PlanParse, LoadPlanFileFromDisk) {
  test::TempDir dir;
  json f = fault_json("disk", "net", "stall");
  f["params"] = {{"ms", 40}};
  test::write_text(dir.file("plan.json"), plan_json({f}).dump(2));
  FaultPlan plan = load_plan_file(dir.file("plan.json"));
  ASSERT_EQ(plan.faults.size(), 1u);
  EXPECT_EQ(plan.faults[0].kind, "stall");
  EXPECT_EQ(plan.seed, 7u);
}

TEST(PlanParse, DescribeJson) {
  EXPECT_EQ(describe_json(json("ten")), "\"ten\"");
  EXPECT_EQ(describe_json(json(-3)), "-3");
  EXPECT_EQ(describe_json(json::object()), "an object");
  EXPECT_EQ(describe_json(json::array()), "an array");
  EXPECT_EQ(describe_json(json(nullptr)), "null");
  EXPECT_EQ(describe_json(json(true)), "true");
  std::string long_text = describe_json(json(std::string(200, 'x')));
  EXPECT_EQ(long_text.size(), 80u);
  EXPECT_EQ(long_text.substr(77), "...");
}

}  // namespace
}  // namespace ncclfi
