// For every value the plan validator accepts, the preload does exactly that: each accepted signal kills
// the process by that signal, each exit code is the process's exit status, each NCCL code is what the
// call returns (error, init_fail) or what ncclCommGetAsyncError reports (async_error), and each op
// gpu_hang can hit gets the stream wait ahead of it. The values come from the core's tables, so a value
// added there without its effect fails here.
#include <sys/resource.h>

#include "ncclfi/fault_kinds.h"
#include "ncclfi/nccl_results.h"
#include "ncclfi/signals.h"
#include "preload_fixture.h"

namespace ncclfi::test {
namespace {

json on_allreduce() {
  return json{{"ranks", {0}}, {"ops", {"allreduce"}}};
}

class PreloadEveryValue : public PreloadTest {
 protected:
  void SetUp() override {
    PreloadTest::SetUp();
    // Half the accepted signals dump core by default: keep the test from writing cores.
    const rlimit none{0, 0};
    setrlimit(RLIMIT_CORE, &none);
  }

  // Six faults, one per code of the table, each firing once: fault i fires at call i (the earlier ones
  // have used their one firing), so call i carries code i of the table.
  static json one_fault_per_code(const std::string& kind, bool by_name) {
    json faults = json::array();
    int i = 0;
    for (const auto& e : kNcclErrors) {
      const json code = by_name ? json(e.name) : json(to_int(e.code));
      faults.push_back(fault("c" + std::to_string(++i), kind, {{"code", code}}, on_allreduce(),
                             {{"after_calls", 1}, {"count", 1}}));
    }
    return faults;
  }
};

TEST_F(PreloadEveryValue, CrashDiesByEveryAcceptedSignal) {
  const std::vector<int> signals = accepted_signal_numbers();
  ASSERT_GT(signals.size(), 20u);
  for (int sig : signals) {
    const std::string name = signal_name(sig);
    // Named signals by name, as plans write them; the realtime ones by number (their only form).
    const json value = name.rfind("SIGRTMIN", 0) == 0 ? json(sig) : json(name);
    write_plan(json::array({fault("c", "crash", {{"signal", value}}, on_allreduce(), json::object())}));
    const auto r = run({"ops", "allreduce", "1"});
    EXPECT_EQ(r.term_signal, sig) << value.dump() << ": exit " << r.exit_code << " " << r.err;
    EXPECT_EQ(outcomes(r.out).count(1), 0u) << value.dump() << ": the call returned";
  }
}

TEST_F(PreloadEveryValue, CrashExitsWithEveryAcceptedExitCode) {
  for (int code = 0; code <= 255; ++code) {
    write_plan(json::array({fault("x", "crash", {{"exit_code", code}}, on_allreduce(), json::object())}));
    const auto r = run({"ops", "allreduce", "1"});
    EXPECT_EQ(r.term_signal, 0) << code;
    EXPECT_EQ(r.exit_code, code) << r.err;
    EXPECT_EQ(outcomes(r.out).count(1), 0u) << code << ": the call returned";
  }
}

TEST_F(PreloadEveryValue, ErrorReturnsEveryAcceptedCode) {
  for (bool by_name : {true, false}) {
    write_plan(one_fault_per_code("error", by_name));
    const auto r = run({"ops", "allreduce", std::to_string(std::size(kNcclErrors) + 1)});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    const auto o = outcomes(r.out);
    int call = 0;
    for (const auto& e : kNcclErrors)
      EXPECT_EQ(o.at(++call).rc, to_int(e.code)) << e.name << " by_name=" << by_name;
    EXPECT_EQ(o.at(++call).rc, 0) << "after the faults";
  }
}

TEST_F(PreloadEveryValue, AsyncErrorReportsEveryAcceptedCode) {
  for (bool by_name : {true, false}) {
    write_plan(one_fault_per_code("async_error", by_name));
    const auto r = run({"ops", "allreduce", std::to_string(std::size(kNcclErrors))});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    const auto a = async_codes(r.out);
    int call = 0;
    for (const auto& e : kNcclErrors)
      EXPECT_EQ(a.at(++call), to_int(e.code)) << e.name << " by_name=" << by_name;
  }
}

TEST_F(PreloadEveryValue, InitFailReturnsEveryAcceptedCode) {
  for (const auto& e : kNcclErrors) {
    for (const json& code : {json(e.name), json(to_int(e.code))}) {
      write_plan(json::array({fault("f", "init_fail", {{"code", code}}, {{"ranks", {0}}}, json::object())}));
      const auto r = run({"init", "initrank", "--rank", "0"});
      ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
      EXPECT_NE(r.out.find("init rc=" + std::to_string(to_int(e.code)) + " "), std::string::npos)
          << code.dump() << ": " << r.out;
    }
  }
}

TEST_F(PreloadEveryValue, GpuHangWaitsAheadOfEveryOpItCanHit) {
  // The NCCL function the driver's op calls first (what the double records).
  const std::map<std::string, std::string> nccl_function = {{"allreduce", "ncclAllReduce"},
                                                            {"allgather", "ncclAllGather"},
                                                            {"reducescatter", "ncclReduceScatter"},
                                                            {"reduce", "ncclReduce"},
                                                            {"broadcast", "ncclBroadcast"},
                                                            {"alltoall", "ncclAlltoAll"},
                                                            {"gather", "ncclGather"},
                                                            {"scatter", "ncclScatter"},
                                                            {"send", "ncclSend"},
                                                            {"recv", "ncclRecv"}};
  const FaultKindSpec* kind = find_fault_kind(Layer::kApi, "gpu_hang");
  ASSERT_NE(kind, nullptr);
  ASSERT_EQ(kind->points.size(), nccl_function.size());
  for (const std::string_view point : kind->points) {
    const std::string op(point.substr(point.rfind('/') + 1));
    ASSERT_EQ(nccl_function.count(op), 1u) << point << ": an op the driver cannot call";
    std::filesystem::remove(path("calls.log"));
    std::filesystem::remove(path("events.jsonl"));
    write_plan(json::array({fault("g", "gpu_hang", json::object(), {{"ops", {op}}}, json::object())}));
    const auto r = run({"ops", op, "1"});
    ASSERT_EQ(r.exit_code, 0) << op << ": " << r.out << r.err;
    const auto log = calls();
    std::vector<std::string> order;
    for (const auto& l : log) {
      if (l.rfind("cuStreamWaitValue32 ", 0) == 0 || l.rfind(nccl_function.at(op) + " ", 0) == 0)
        order.push_back(l.substr(0, l.find(' ')));
    }
    EXPECT_EQ(order, (std::vector<std::string>{"cuStreamWaitValue32", nccl_function.at(op)})) << op;
    const auto inj = events("inject");
    ASSERT_EQ(inj.size(), 1u) << op;
    EXPECT_EQ(inj[0]["point"], std::string(point));
    EXPECT_EQ(inj[0]["forever"], true) << op;
  }
}

}  // namespace
}  // namespace ncclfi::test
