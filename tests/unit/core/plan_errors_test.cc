// The rejection of every kind of bad field, checked on the exact message format
// `file: /json/pointer: expected <what>, got <found>` and on PlanError's parts.
#include <gtest/gtest.h>
#include <csignal>

#include "ncclfi/plan.h"
#include "ncclfi/signals.h"
#include "test_support.h"

namespace ncclfi {
namespace {

using nlohmann::json;
using test::fault_json;
using test::plan_json;

// Parses `doc` as "p.json" and returns the PlanError it must throw.
PlanError rejection(const json& doc) {
  try {
    parse_plan(doc, "p.json");
  } catch (const PlanError& e) {
    return e;
  }
  ADD_FAILURE() << "accepted: " << doc.dump();
  return PlanError("", "", "", "");
}

// A plan of one fault with `field` (a JSON pointer inside the fault) set to `value`.
json with_field(json fault, const std::string& field, const json& value) {
  fault[json::json_pointer(field)] = value;
  return plan_json({fault});
}

void expect_error(const json& doc, const std::string& pointer, const std::string& expected,
                  const std::string& found) {
  PlanError e = rejection(doc);
  EXPECT_EQ(e.file(), "p.json");
  EXPECT_EQ(e.pointer(), pointer);
  EXPECT_EQ(e.expected(), expected);
  EXPECT_EQ(e.found(), found);
  EXPECT_EQ(std::string(e.what()), "p.json: " + pointer + ": expected " + expected + ", got " + found);
}

TEST(PlanErrors, DocumentedExampleWordForWord) {
  PlanError e = rejection(with_field(fault_json(), "/trigger/after_calls", "ten"));
  EXPECT_STREQ(e.what(), "p.json: /faults/0/trigger/after_calls: expected a positive integer, got \"ten\"");
}

TEST(PlanErrors, UnknownKeyAtEveryLevel) {
  json top = plan_json({fault_json()});
  top["sed"] = 1;
  expect_error(top, "/sed", "no such key (allowed: version, seed, control, faults)", "\"sed\"");
  expect_error(with_field(fault_json(), "/triger", json::object()), "/faults/0/triger",
               "no such key (allowed: id, layer, kind, params, target, trigger, summary)", "\"triger\"");
  expect_error(with_field(fault_json(), "/target/rank", 1), "/faults/0/target/rank",
               "no such key (allowed: ranks, ops, peer, direction, min_bytes, comm, device, port)",
               "\"rank\"");
  expect_error(with_field(fault_json(), "/trigger/after", 1), "/faults/0/trigger/after",
               "no such key (allowed: after_calls, after_ms, probability, seed, count, armed, duration_s, "
               "every_s, times)",
               "\"after\"");
  expect_error(with_field(fault_json(), "/target/ranks", {{"random", 1}, {"sed", 2}}),
               "/faults/0/target/ranks/sed", "no such key (allowed: random, seed)", "\"sed\"");
  expect_error(with_field(fault_json(), "/params/cde", 1), "/faults/0/params/cde",
               "a parameter of api error (code)", "\"cde\"");
  expect_error(with_field(fault_json("s", "api", "skip"), "/params/x", 1), "/faults/0/params/x",
               "a parameter of api skip (it takes none)", "\"x\"");
}

// target.device / target.port: one HCA and one of its ports, verbs faults only.
TEST(PlanErrors, HcaAndPortTargetsAreCheckedAndOnlyForVerbs) {
  const json verbs = fault_json("v", "verbs", "retry_exceeded");
  const std::string port_expected = "a port number from 1 to 255 (ports are 1-based)";
  expect_error(with_field(verbs, "/target/port", 0), "/faults/0/target/port", port_expected, "0");
  expect_error(with_field(verbs, "/target/port", -1), "/faults/0/target/port", port_expected, "-1");
  expect_error(with_field(verbs, "/target/port", 256), "/faults/0/target/port", port_expected, "256");
  expect_error(with_field(verbs, "/target/port", "1"), "/faults/0/target/port", port_expected, "\"1\"");
  expect_error(with_field(verbs, "/target/port", 1.5), "/faults/0/target/port", port_expected, "1.5");
  const std::string device_expected = "an HCA name as ibv_devices lists it (\"mlx5_0\")";
  expect_error(with_field(verbs, "/target/device", 0), "/faults/0/target/device", device_expected, "0");
  expect_error(with_field(verbs, "/target/device", ""), "/faults/0/target/device", device_expected, "\"\"");
  expect_error(with_field(verbs, "/target/device", json::array({"mlx5_0"})), "/faults/0/target/device",
               device_expected, "an array");
  expect_error(with_field(fault_json(), "/target/port", 1), "/faults/0/target/port",
               "no `port` (only verbs faults target an HCA or a port)", "1");
  expect_error(with_field(fault_json("n", "net", "drop"), "/target/device", "mlx5_0"),
               "/faults/0/target/device", "no `device` (only verbs faults target an HCA or a port)",
               "\"mlx5_0\"");
}

TEST(PlanErrors, KeysAreEscapedAsJsonPointers) {
  json top = plan_json({});
  top["a/b~c"] = 1;
  EXPECT_EQ(rejection(top).pointer(), "/a~1b~0c");
}

TEST(PlanErrors, WrongTypes) {
  expect_error(json::array(), "/", "an object", "an array");
  expect_error(json{{"faults", json::object()}}, "/faults", "an array of faults", "an object");
  expect_error(json{{"seed", "1"}, {"faults", json::array()}}, "/seed", "a non-negative integer", "\"1\"");
  expect_error(json{{"control", "yes"}, {"faults", json::array()}}, "/control", "true or false", "\"yes\"");
  expect_error(json{{"version", 2}, {"faults", json::array()}}, "/version", "1", "2");
  expect_error(plan_json({json(3)}), "/faults/0", "an object", "3");
  expect_error(with_field(fault_json(), "/id", 5), "/faults/0/id", "a string", "5");
  expect_error(with_field(fault_json(), "/kind", true), "/faults/0/kind", "a string", "true");
  expect_error(with_field(fault_json(), "/summary", 5), "/faults/0/summary", "a string", "5");
  expect_error(with_field(fault_json(), "/params", json::array()), "/faults/0/params", "an object",
               "an array");
  expect_error(with_field(fault_json(), "/target", "all"), "/faults/0/target", "an object", "\"all\"");
  expect_error(with_field(fault_json(), "/trigger", nullptr), "/faults/0/trigger", "an object", "null");
  expect_error(with_field(fault_json(), "/trigger/armed", 1), "/faults/0/trigger/armed", "true or false",
               "1");
  expect_error(with_field(fault_json(), "/trigger/seed", "x"), "/faults/0/trigger/seed",
               "a non-negative integer", "\"x\"");
  expect_error(with_field(fault_json(), "/trigger/count", 1.5), "/faults/0/trigger/count",
               "a non-negative integer", "1.5");
  expect_error(with_field(fault_json("d", "api", "delay"), "/params/ms", "5"), "/faults/0/params/ms",
               "a non-negative number", "\"5\"");
  expect_error(with_field(fault_json("c", "api", "corrupt"), "/params/mode", 1), "/faults/0/params/mode",
               "a string", "1");
}

TEST(PlanErrors, OutOfRange) {
  expect_error(json{{"seed", -1}, {"faults", json::array()}}, "/seed", "a non-negative integer", "-1");
  expect_error(with_field(fault_json(), "/trigger/after_calls", 0), "/faults/0/trigger/after_calls",
               "a positive integer", "0");
  expect_error(with_field(fault_json(), "/trigger/after_calls", -4), "/faults/0/trigger/after_calls",
               "a positive integer", "-4");
  expect_error(with_field(fault_json(), "/trigger/after_ms", -1), "/faults/0/trigger/after_ms",
               "a non-negative number", "-1");
  expect_error(with_field(fault_json(), "/trigger/after_ms", 1e13), "/faults/0/trigger/after_ms",
               "at most 1e12 ms", "10000000000000.0");
  expect_error(with_field(fault_json(), "/trigger/count", -1), "/faults/0/trigger/count",
               "a non-negative integer", "-1");
  expect_error(with_field(fault_json("g", "api", "gpu_hang"), "/params/ms", -1), "/faults/0/params/ms",
               "a non-negative number", "-1");
  expect_error(with_field(fault_json(), "/target/ranks", json::array({0, -1})), "/faults/0/target/ranks/1",
               "a non-negative integer", "-1");
  expect_error(with_field(fault_json(), "/target/ranks", json::array({2000000})), "/faults/0/target/ranks/0",
               "a rank below 1048576", "2000000");
  expect_error(with_field(fault_json(), "/target/ranks", json::array()), "/faults/0/target/ranks",
               "a non-empty list of ranks", "an array");
  expect_error(with_field(fault_json(), "/target/ranks", "some"), "/faults/0/target/ranks",
               "\"all\", a list of ranks or {\"random\": n, \"seed\": s}", "\"some\"");
  expect_error(with_field(fault_json(), "/target/ranks", 3), "/faults/0/target/ranks",
               "\"all\", a list of ranks or {\"random\": n, \"seed\": s}", "3");
  expect_error(with_field(fault_json(), "/target/ranks", {{"random", 0}}), "/faults/0/target/ranks/random",
               "a positive integer", "0");
  expect_error(with_field(fault_json(), "/target/ranks", {{"random", 2000000}}),
               "/faults/0/target/ranks/random", "a count below 1048576", "2000000");
  expect_error(with_field(fault_json(), "/target/ranks", {{"seed", 1}}), "/faults/0/target/ranks/random",
               "how many ranks to pick", "nothing");
  expect_error(with_field(fault_json(), "/target/peer", -2), "/faults/0/target/peer",
               "a non-negative integer", "-2");
  expect_error(with_field(fault_json(), "/target/peer", 1 << 21), "/faults/0/target/peer",
               "a rank below 1048576", "2097152");
  expect_error(with_field(fault_json(), "/target/direction", "up"), "/faults/0/target/direction",
               "\"send\", \"recv\" or \"any\"", "\"up\"");
  expect_error(with_field(fault_json(), "/target/min_bytes", 1.5), "/faults/0/target/min_bytes",
               "a non-negative integer", "1.5");
  expect_error(with_field(fault_json(), "/target/comm", 1 << 21), "/faults/0/target/comm",
               "a communicator index below 1048576", "2097152");
  expect_error(with_field(fault_json("t", "net", "throttle"), "/params/gbps", 0), "/faults/0/params/gbps",
               "a positive number", "0");
  expect_error(with_field(fault_json("c", "net", "corrupt"), "/params/bits", 0), "/faults/0/params/bits",
               "a positive integer", "0");
  expect_error(with_field(fault_json("x", "api", "crash"), "/params/exit_code", -1),
               "/faults/0/params/exit_code", "an exit code 0-255", "-1");
  // 256 would exit 0: accepted values must do exactly what they say.
  expect_error(with_field(fault_json("x", "api", "crash"), "/params/exit_code", 256),
               "/faults/0/params/exit_code", "an exit code 0-255", "256");
  json both = fault_json("x", "api", "crash");
  both["params"] = {{"exit_code", 3}, {"signal", "SIGKILL"}};
  expect_error(plan_json({both}), "/faults/0/params/exit_code", "signal or exit_code, not both", "3");
  expect_error(with_field(fault_json("c", "api", "corrupt"), "/params/mode", "random"),
               "/faults/0/params/mode", "one of bitflip, nan, zero", "\"random\"");
}

TEST(PlanErrors, MissingRequired) {
  expect_error(json{{"seed", 1}}, "/faults", "an array of faults", "nothing");
  json no_id = fault_json();
  no_id.erase("id");
  expect_error(plan_json({no_id}), "/faults/0/id", "a fault id (letters, digits, _ - .)", "nothing");
  json no_layer = fault_json();
  no_layer.erase("layer");
  expect_error(plan_json({no_layer}), "/faults/0/layer",
               "one of \"net\", \"api\", \"proc\", \"link\", \"verbs\"", "nothing");
  json no_kind = fault_json();
  no_kind.erase("kind");
  expect_error(plan_json({no_kind}), "/faults/0/kind", "a fault kind", "nothing");
  expect_error(plan_json({fault_json("d", "net", "delay")}), "/faults/0/params/ms",
               "a value (how long each hit completion is held, in ms)", "nothing");
  expect_error(plan_json({fault_json("t", "net", "throttle")}), "/faults/0/params/gbps",
               "a value (the rate per connection, Gbit/s)", "nothing");
  expect_error(plan_json({fault_json("s", "net", "stall")}), "/faults/0/params/ms",
               "a value (how long the connection makes no progress)", "nothing");
}

TEST(PlanErrors, UnknownLayerAndUnknownKindForALayer) {
  expect_error(plan_json({fault_json("g", "gpu", "error")}), "/faults/0/layer",
               "one of \"net\", \"api\", \"proc\", \"link\", \"verbs\"", "\"gpu\"");
  expect_error(plan_json({fault_json("n", "net", "hang")}), "/faults/0/kind",
               "a net fault kind (delay, throttle, drop, corrupt, error, connect_fail, stall, nic_down)",
               "\"hang\"");
  expect_error(
      plan_json({fault_json("a", "api", "drop")}), "/faults/0/kind",
      "a api fault kind (delay, hang, gpu_hang, skip, error, async_error, nvlink_error, corrupt, crash, "
      "init_fail, init_hang, bandwidth_cap, nvlink_down, pcie_downgrade, bootstrap_unreachable)",
      "\"drop\"");
  expect_error(plan_json({fault_json("p", "proc", "delay")}), "/faults/0/kind",
               "a proc fault kind (stop, kill)", "\"delay\"");
}

TEST(PlanErrors, BadOpForALayer) {
  expect_error(with_field(fault_json("n", "net", "drop"), "/target/ops", json::array({"allreduce"})),
               "/faults/0/target/ops/0", "a net op (isend, irecv, test, connect, accept)", "\"allreduce\"");
  expect_error(
      with_field(fault_json(), "/target/ops", json::array({"allreduce", "isend"})), "/faults/0/target/ops/1",
      "an api op (allreduce, allgather, reducescatter, reduce, broadcast, alltoall, gather, scatter, send, "
      "recv, group_end, abort, init, root, rendezvous)",
      "\"isend\"");
  expect_error(with_field(fault_json("p", "proc", "stop"), "/target/ops", json::array({"pause"})),
               "/faults/0/target/ops/0", "a proc op (stop, kill)", "\"pause\"");
  expect_error(with_field(fault_json(), "/target/ops", json::array()), "/faults/0/target/ops",
               "a non-empty list of op names", "an array");
  expect_error(with_field(fault_json(), "/target/ops", "allreduce"), "/faults/0/target/ops",
               "a non-empty list of op names", "\"allreduce\"");
  expect_error(with_field(fault_json(), "/target/ops", json::array({7})), "/faults/0/target/ops/0",
               "a string", "7");
}

TEST(PlanErrors, OpsTheKindCannotHit) {
  expect_error(with_field(fault_json("c", "net", "corrupt"), "/target/ops", json::array({"isend"})),
               "/faults/0/target/ops", "ops that net corrupt can hit (points: net/irecv)", "an array");
  expect_error(with_field(fault_json("i", "api", "init_fail"), "/target/ops", json::array({"allreduce"})),
               "/faults/0/target/ops", "ops that api init_fail can hit (points: nccl/comm/init)", "an array");
  // gpu_hang needs the op's stream: group end and comm creation have none.
  const std::string gpu_hang_points =
      "ops that api gpu_hang can hit (points: nccl/coll/allreduce, nccl/coll/allgather, "
      "nccl/coll/reducescatter, nccl/coll/reduce, nccl/coll/broadcast, nccl/coll/alltoall, nccl/coll/gather, "
      "nccl/coll/scatter, nccl/p2p/send, nccl/p2p/recv)";
  expect_error(with_field(fault_json("g", "api", "gpu_hang"), "/target/ops", json::array({"group_end"})),
               "/faults/0/target/ops", gpu_hang_points, "an array");
  expect_error(with_field(fault_json("g", "api", "gpu_hang"), "/target/ops", json::array({"init"})),
               "/faults/0/target/ops", gpu_hang_points, "an array");
  // One hittable op among others is enough.
  EXPECT_NO_THROW(parse_plan(
      with_field(fault_json("c", "net", "corrupt"), "/target/ops", json::array({"isend", "irecv"})),
      "p.json"));
}

TEST(PlanErrors, DuplicateAndBadIds) {
  expect_error(plan_json({fault_json("dup"), fault_json("ok"), fault_json("dup")}), "/faults/2/id",
               "an id not used by another fault", "\"dup\"");
  const std::string bad_id = "an id of 1-64 letters, digits, '_', '-' or '.'";
  expect_error(plan_json({fault_json("has space")}), "/faults/0/id", bad_id, "\"has space\"");
  expect_error(plan_json({fault_json("")}), "/faults/0/id", bad_id, "\"\"");
  expect_error(plan_json({fault_json("a/b")}), "/faults/0/id", bad_id, "\"a/b\"");
  expect_error(plan_json({fault_json(std::string(65, 'x'))}), "/faults/0/id", bad_id,
               "\"" + std::string(65, 'x') + "\"");
  EXPECT_NO_THROW(parse_plan(plan_json({fault_json(std::string(64, 'x'))}), "p.json"));
  EXPECT_NO_THROW(parse_plan(plan_json({fault_json("A-z_0.9")}), "p.json"));
}

TEST(PlanErrors, BadProbability) {
  const std::string expected = "a number in (0, 1]";
  expect_error(with_field(fault_json(), "/trigger/probability", 0), "/faults/0/trigger/probability", expected,
               "0");
  expect_error(with_field(fault_json(), "/trigger/probability", 1.5), "/faults/0/trigger/probability",
               expected, "1.5");
  expect_error(with_field(fault_json(), "/trigger/probability", -0.1), "/faults/0/trigger/probability",
               expected, "-0.1");
  expect_error(with_field(fault_json(), "/trigger/probability", "half"), "/faults/0/trigger/probability",
               expected, "\"half\"");
  EXPECT_NO_THROW(parse_plan(with_field(fault_json(), "/trigger/probability", 1), "p.json"));
}

TEST(PlanErrors, BadCodeAndSignalNames) {
  const std::string code =
      "an NCCL error code: 1-6 or its name (ncclUnhandledCudaError, ncclSystemError, ncclInternalError, "
      "ncclInvalidArgument, ncclInvalidUsage, ncclRemoteError)";
  expect_error(with_field(fault_json(), "/params/code", "ncclBogus"), "/faults/0/params/code", code,
               "\"ncclBogus\"");
  expect_error(with_field(fault_json(), "/params/code", "ncclSuccess"), "/faults/0/params/code", code,
               "\"ncclSuccess\"");
  // Not in NCCL 2.28, and not an error / not a code.
  expect_error(with_field(fault_json(), "/params/code", "ncclTimeout"), "/faults/0/params/code", code,
               "\"ncclTimeout\"");
  expect_error(with_field(fault_json(), "/params/code", "ncclInProgress"), "/faults/0/params/code", code,
               "\"ncclInProgress\"");
  expect_error(with_field(fault_json(), "/params/code", 7), "/faults/0/params/code", code, "7");
  expect_error(with_field(fault_json(), "/params/code", 8), "/faults/0/params/code", code, "8");
  // Names exactly as nccl.h spells them: no short forms.
  expect_error(with_field(fault_json(), "/params/code", "RemoteError"), "/faults/0/params/code", code,
               "\"RemoteError\"");
  expect_error(with_field(fault_json(), "/params/code", 0), "/faults/0/params/code", code, "0");
  expect_error(with_field(fault_json("n", "net", "connect_fail"), "/params/code", 2.5),
               "/faults/0/params/code", code, "2.5");
  const std::string signal =
      "a signal whose default action ends the process (a name such as \"SIGKILL\" or a number; `ncclfi list "
      "faults` lists them)";
  expect_error(with_field(fault_json("c", "api", "crash"), "/params/signal", "SIGFOO"),
               "/faults/0/params/signal", signal, "\"SIGFOO\"");
  expect_error(with_field(fault_json("k", "proc", "kill"), "/params/signal", 0), "/faults/0/params/signal",
               signal, "0");
  expect_error(with_field(fault_json("k", "proc", "kill"), "/params/signal", 65), "/faults/0/params/signal",
               signal, "65");
  expect_error(with_field(fault_json("k", "proc", "kill"), "/params/signal", 2.0), "/faults/0/params/signal",
               signal, "2.0");
}

// Signals whose default action does not end the process are refused with the reason, by name and by
// number.
TEST(PlanErrors, SignalsThatDoNotKillAreRefused) {
  const std::string stops =
      "a signal whose default action ends the process (SIGSTOP: its default action stops the process (use a "
      "proc stop fault))";
  expect_error(with_field(fault_json("c", "api", "crash"), "/params/signal", "SIGSTOP"),
               "/faults/0/params/signal", stops, "\"SIGSTOP\"");
  expect_error(with_field(fault_json("k", "proc", "kill"), "/params/signal", SIGSTOP),
               "/faults/0/params/signal", stops, std::to_string(SIGSTOP));
  for (const RefusedSignal& r : refused_signals()) {
    for (const json& value : {json(r.name), json(r.number), json(std::string(r.name.substr(3)))}) {
      try {
        parse_plan(with_field(fault_json("k", "proc", "kill"), "/params/signal", value), "p.json");
        ADD_FAILURE() << "accepted " << value.dump();
      } catch (const PlanError& e) {
        EXPECT_EQ(e.pointer(), "/faults/0/params/signal");
        EXPECT_NE(e.expected().find(std::string(r.name) + ": " + std::string(r.why)), std::string::npos)
            << e.what();
      }
    }
  }
}

TEST(PlanErrors, ParseFaultUsesTheGivenPointer) {
  try {
    parse_fault(json{{"id", "x"}, {"layer", "api"}, {"kind", "nope"}}, "scenario.json", "/scenario/faults/3");
    FAIL() << "accepted";
  } catch (const PlanError& e) {
    EXPECT_EQ(e.file(), "scenario.json");
    EXPECT_EQ(e.pointer(), "/scenario/faults/3/kind");
  }
}

TEST(PlanErrors, LoadPlanFileSyntaxErrorNamesTheByteOffset) {
  test::TempDir dir;
  std::string path = dir.file("plan.json");
  test::write_text(path, "{\"faults\": [}");
  try {
    load_plan_file(path);
    FAIL() << "accepted";
  } catch (const PlanError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.pointer(), "/");
    EXPECT_EQ(e.expected(), "valid JSON");
    EXPECT_EQ(e.found(), "a syntax error at byte 13");
    EXPECT_EQ(std::string(e.what()), path + ": /: expected valid JSON, got a syntax error at byte 13");
  }
  test::write_text(path, "");
  try {
    load_plan_file(path);
    FAIL() << "accepted";
  } catch (const PlanError& e) {
    EXPECT_EQ(e.found(), "a syntax error at byte 1");
  }
}

TEST(PlanErrors, LoadPlanFileMissingFileAndSemanticErrorsNameTheFile) {
  test::TempDir dir;
  try {
    load_plan_file(dir.file("absent.json"));
    FAIL() << "accepted";
  } catch (const PlanError& e) {
    EXPECT_EQ(e.file(), dir.file("absent.json"));
    EXPECT_EQ(e.expected(), "a readable plan file");
  }
  std::string path = dir.file("plan.json");
  test::write_text(path, R"({"faults": [{"id": "a", "layer": "api", "kind": "error",
                              "trigger": {"after_calls": "ten"}}]})");
  try {
    load_plan_file(path);
    FAIL() << "accepted";
  } catch (const PlanError& e) {
    EXPECT_EQ(std::string(e.what()),
              path + ": /faults/0/trigger/after_calls: expected a positive integer, got \"ten\"");
  }
}

}  // namespace
}  // namespace ncclfi
