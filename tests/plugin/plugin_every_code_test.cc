// For every NCCL code the plan validator accepts, by name and by number, the shim returns exactly that
// code: `error` from isend, `connect_fail` from connect and accept. The codes come from the core's
// table, so a code added there without its effect fails here.
#include <cstring>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ncclfi/nccl_results.h"
#include "plugin_test_util.h"

namespace ncclfi::plugin_test {
namespace {

using nlohmann::json;

// The codes in the order the faults below fire: the table by name, then the table by number.
std::vector<int> expected_codes() {
  std::vector<int> codes;
  for (int round = 0; round < 2; ++round) {
    for (const auto& e : kNcclErrors) codes.push_back(to_int(e.code));
  }
  return codes;
}

// One fault per accepted code and form, each firing once: fault i fires at the i-th matching call
// (the earlier ones have used their one firing).
std::string plan_one_fault_per_code(const std::string& kind, const std::string& op) {
  json faults = json::array();
  int i = 0;
  for (bool by_name : {true, false}) {
    for (const auto& e : kNcclErrors) {
      faults.push_back({{"id", "c" + std::to_string(++i)},
                        {"layer", "net"},
                        {"kind", kind},
                        {"params", {{"code", by_name ? json(e.name) : json(to_int(e.code))}}},
                        {"target", {{"ops", {op}}}},
                        {"trigger", {{"after_calls", 1}, {"count", 1}}}});
    }
  }
  return write_temp_file("plan-" + kind + "-" + op + ".json", json{{"seed", 7}, {"faults", faults}}.dump());
}

TEST(NetEveryCode, IsendErrorReturnsEveryAcceptedCode) {
  const std::string plan = plan_one_fault_per_code("error", "isend");
  PairOptions options;
  options.sender_env = {{"NCCLFI_PLAN", plan}};
  options.receiver_env = options.sender_env;
  auto [s, r] = run_pair(
      options,
      [](Endpoint& ep) {
        char buf[64] = {};
        for (int code : expected_codes()) {
          void* req = nullptr;
          const ncclResult_t got = ep.plugin->isend(ep.comm, buf, 64, 0, nullptr, nullptr, &req);
          CHILD_CHECK(got == code, "isend returned %d, asked %d", static_cast<int>(got), code);
          CHILD_CHECK(req == nullptr, "a failed isend returned a request");
        }
        ep.send_value(1);
        return 0;
      },
      [](Endpoint& ep) {
        ep.recv_value();
        return 0;
      });
  EXPECT_EQ(s, 0);
  EXPECT_EQ(r, 0);
}

TEST(NetEveryCode, ConnectFailReturnsEveryAcceptedCode) {
  for (const char* op : {"connect", "accept"}) {
    const std::string plan = plan_one_fault_per_code("connect_fail", op);
    const int status = run_child({{"NCCLFI_PLAN", plan}, {"NCCLFI_RANK", "0"}}, [op] {
      void* ctx = nullptr;
      auto plugin = load_and_init(shim_path(), &ctx);
      char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
      void* lc = nullptr;
      CHILD_CHECK(plugin->listen(ctx, 0, handle, &lc) == ncclSuccess, "listen");
      for (int code : expected_codes()) {
        void* comm = nullptr;
        const ncclResult_t got = std::strcmp(op, "connect") == 0 ? plugin->connect(ctx, 0, handle, &comm)
                                                                 : plugin->accept(lc, &comm);
        CHILD_CHECK(got == code, "%s returned %d, asked %d", op, static_cast<int>(got), code);
        CHILD_CHECK(comm == nullptr, "a comm came back");
      }
      return 0;
    });
    EXPECT_EQ(status, 0) << op;
  }
}

}  // namespace
}  // namespace ncclfi::plugin_test
