// libncclfi-ibverbs.so, label `verbs`. NO RDMA HARDWARE IS USED: the symbol test reads the installed
// libibverbs's file, the forwarding test loads it (it finds no device on this host), and every fault is
// driven on libncclfi-fake-ibverbs.so, an in-process loopback stand-in (tests/verbs/fake_ibverbs.cc says
// what it is and why). Each case runs ncclfi-verbs-probe in a process of its own, with the plan in its
// environment, and reads what it printed and the events it wrote.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ncclfi/fault_action.h"
#include "ncclfi/ib_retry_budget.h"
#include "ncclfi/ib_verbs_codes.h"

namespace fs = std::filesystem;
namespace ib = ncclfi::ib;
using nlohmann::json;

namespace {

const std::string kLibDir = NCCLFI_TEST_LIB_DIR;
const std::string kWrapper = kLibDir + "/libncclfi-ibverbs.so";
const std::string kFake = kLibDir + "/libncclfi-fake-ibverbs.so";
const std::string kProbe = std::string(NCCLFI_TEST_BIN_DIR) + "/ncclfi-verbs-probe";

std::string run(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return out;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  pclose(p);
  return out;
}

struct Wc {
  uint64_t wr_id = 0;
  int status = -1;
  std::string qp;
  uint32_t vendor_err = 0;
  double ms = 0;
};

struct ProbeResult {
  std::vector<std::string> lines;
  std::vector<Wc> wcs;
  std::vector<json> events;
  std::string line_starting(const std::string& prefix) const {
    for (const auto& l : lines) {
      if (l.rfind(prefix, 0) == 0) return l;
    }
    return "";
  }
  const Wc* wc(const std::string& qp, uint64_t wr_id) const {
    for (const auto& w : wcs) {
      if (w.qp == qp && w.wr_id == wr_id) return &w;
    }
    return nullptr;
  }
  std::vector<json> injections() const {
    std::vector<json> out;
    for (const auto& e : events) {
      if (e.value("event", "") == "inject") out.push_back(e);
    }
    return out;
  }
};

class VerbsWrapper : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "ncclfi-verbs-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs the probe with the plan (null: none) against the stand-in through the wrapper.
  // `ports` 2: a second loopback pair, C sends to D, on the stand-in's port 2 (A and B are on port 1).
  ProbeResult probe(const json& faults, std::map<std::string, std::string> env = {}, int sends = 3,
                    int poll_ms = 1500, const std::string& lib = kWrapper, int ports = 1) {
    env.try_emplace("NCCLFI_IBVERBS_REAL", kFake);
    env["NCCLFI_EVENTS"] = dir_ + "/events.jsonl";
    env["NCCLFI_RANK"] = "0";
    if (!faults.is_null()) {
      std::ofstream(dir_ + "/plan.json") << json{{"version", 1}, {"seed", 7}, {"faults", faults}}.dump();
      env["NCCLFI_PLAN"] = dir_ + "/plan.json";
    }
    std::string cmd = "env";
    for (const auto& [k, v] : env) cmd += " '" + k + "=" + v + "'";
    cmd += " '" + kProbe + "' '" + lib + "' " + std::to_string(sends) + " " + std::to_string(poll_ms) + " " +
           std::to_string(ports) + " 2>&1";
    ProbeResult r;
    std::istringstream out(run(cmd));
    for (std::string line; std::getline(out, line);) {
      r.lines.push_back(line);
      Wc w;
      char qp = 0;
      if (std::sscanf(line.c_str(), "wc wr_id=%lu status=%d qp=%c opcode=%*d vendor_err=%u ms=%lf", &w.wr_id,
                      &w.status, &qp, &w.vendor_err, &w.ms) == 5) {
        w.qp = std::string(1, qp);
        r.wcs.push_back(w);
      }
    }
    std::ifstream events(dir_ + "/events.jsonl");
    for (std::string line; std::getline(events, line);) r.events.push_back(json::parse(line));
    return r;
  }

  // (Pass json::object() for no parameters: a bare {} is JSON null, which the plan parser rightly refuses.)
  static json fault(const std::string& kind, json params = json::object(), json target = json::object(),
                    json trigger = json::object()) {
    return json{{"id", "f-" + kind}, {"layer", "verbs"}, {"kind", kind},
                {"params", params},  {"target", target}, {"trigger", trigger}};
  }

  std::string dir_;
};

// name@version (or @@ for the default) of every defined dynamic symbol, with nm's type letter.
std::set<std::string> versioned_symbols(const std::string& lib) {
  std::set<std::string> out;
  std::istringstream text(run("nm -D --defined-only --with-symbol-versions '" + lib + "'"));
  for (std::string line; std::getline(text, line);) {
    std::istringstream f(line);
    std::string addr;
    std::string type;
    std::string name;
    if (f >> addr >> type >> name) out.insert(type + " " + name);
  }
  return out;
}

TEST(VerbsSymbols, EveryVersionedSymbolOfTheInstalledLibibverbsAndNoOther) {
  const auto real = versioned_symbols(NCCLFI_REAL_IBVERBS_PATH);
  const auto ours = versioned_symbols(kWrapper);
  ASSERT_GT(real.size(), 100U) << "nm found too little in " << NCCLFI_REAL_IBVERBS_PATH;
  std::vector<std::string> missing;
  std::vector<std::string> extra;
  std::set_difference(real.begin(), real.end(), ours.begin(), ours.end(), std::back_inserter(missing));
  std::set_difference(ours.begin(), ours.end(), real.begin(), real.end(), std::back_inserter(extra));
  EXPECT_TRUE(missing.empty()) << "missing from the wrapper, e.g. "
                               << (missing.empty() ? "" : missing.front());
  EXPECT_TRUE(extra.empty()) << "the wrapper exports more, e.g. " << (extra.empty() ? "" : extra.front());
  // The ones NCCL asks for by version (src/misc/ibvsymbols.cc).
  EXPECT_TRUE(ours.contains("T ibv_poll_cq@@IBVERBS_1.1") || ours.contains("T ibv_create_cq@@IBVERBS_1.1"));
  EXPECT_TRUE(ours.contains("T ibv_reg_dmabuf_mr@@IBVERBS_1.12"));
  EXPECT_TRUE(ours.contains("T ibv_get_device_list@IBVERBS_1.0"));
}

TEST(VerbsSymbols, SonameIsLibibverbsSo1AndTheLdLibraryPathLinkPointsAtTheWrapper) {
  EXPECT_NE(run("readelf -d '" + kWrapper + "'").find("Library soname: [libibverbs.so.1]"),
            std::string::npos);
  EXPECT_EQ(fs::canonical(kLibDir + "/ibverbs/libibverbs.so.1"), fs::canonical(kWrapper));
}

TEST_F(VerbsWrapper, ForwardsToTheInstalledLibibverbsWhichFindsNoDeviceHere) {
  ProbeResult r = probe(nullptr, {{"NCCLFI_IBVERBS_REAL", NCCLFI_REAL_IBVERBS_PATH}});
  EXPECT_EQ(r.line_starting("devices"), "devices 0") << "this host has no RDMA device";
}

TEST_F(VerbsWrapper, LoadedAsLibibverbsSo1FromLdLibraryPath) {
  ProbeResult r = probe(nullptr, {{"LD_LIBRARY_PATH", kLibDir + "/ibverbs"}}, 3, 1500, "libibverbs.so.1");
  EXPECT_EQ(r.line_starting("devices"), "devices 1") << "only the wrapper can reach the stand-in's device";
}

TEST_F(VerbsWrapper, InertWithoutAPlan) {
  ProbeResult r = probe(nullptr);
  EXPECT_EQ(r.line_starting("patched"), "patched 0");
  EXPECT_EQ(r.line_starting("port "), "port state=4 phys=5 speed=32 width=2");
  ASSERT_EQ(r.wcs.size(), 6U);
  for (const auto& w : r.wcs) EXPECT_EQ(w.status, ib::kWcSuccess);
  EXPECT_TRUE(r.injections().empty());
}

TEST_F(VerbsWrapper, PatchedWithAPlanAndUntouchedCallsPassThrough) {
  // A fault that never fires (a later call than the job makes): the ops are patched, nothing changes.
  ProbeResult r =
      probe(json::array({fault("drop", json::object(), json::object(), {{"after_calls", 1000}})}));
  EXPECT_EQ(r.line_starting("patched"), "patched 1");
  ASSERT_EQ(r.wcs.size(), 6U);
  for (const auto& w : r.wcs) EXPECT_EQ(w.status, ib::kWcSuccess);
  EXPECT_TRUE(r.injections().empty());
}

TEST_F(VerbsWrapper, RetryExceededAfterTheRetryBudgetThenTheQpFlushes) {
  const ncclfi::IbRetrySettings s{14, 7};
  const double budget_ms = static_cast<double>(ncclfi::ib_retry_budget(s)->count()) / 1000.0;  // 536.87
  ProbeResult r =
      probe(json::array({fault("retry_exceeded", {{"vendor_err", 129}}, {{"direction", "send"}})}),
            {{"NCCL_IB_TIMEOUT", "14"}, {"NCCL_IB_RETRY_CNT", "7"}}, 3, 4000);
  const Wc* first = r.wc("A", 0);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->status, ib::kWcRetryExcErr);
  EXPECT_EQ(first->vendor_err, 129U);
  EXPECT_GE(first->ms, budget_ms) << "never before the budget";
  EXPECT_LT(first->ms, budget_ms + 3000);
  for (uint64_t id : {1UL, 2UL}) {
    const Wc* w = r.wc("A", id);
    ASSERT_NE(w, nullptr);
    EXPECT_EQ(w->status, ib::kWcWrFlushErr);
    EXPECT_GE(w->ms, first->ms) << "a QP's completions leave in order";
  }
  for (uint64_t id : {100UL, 101UL, 102UL}) {
    ASSERT_NE(r.wc("B", id), nullptr);
    EXPECT_EQ(r.wc("B", id)->status, ib::kWcSuccess) << "the receiving QP was not targeted";
  }
  ASSERT_EQ(r.injections().size(), 1U);
  EXPECT_EQ(r.injections()[0]["status_name"], "IBV_WC_RETRY_EXC_ERR");
  EXPECT_NEAR(r.injections()[0]["retry_budget_ms"].get<double>(), budget_ms, 0.01);
}

TEST_F(VerbsWrapper, WcErrorAtOnceWithItsStatusThenFlushes) {
  ProbeResult r =
      probe(json::array({fault("wc_error", {{"status", "IBV_WC_REM_ACCESS_ERR"}, {"vendor_err", 136}},
                               {{"direction", "send"}}, {{"after_calls", 2}})}));
  ASSERT_EQ(r.wcs.size(), 6U);
  EXPECT_EQ(r.wc("A", 0)->status, ib::kWcSuccess);
  EXPECT_EQ(r.wc("A", 1)->status, ib::kWcRemAccessErr);
  EXPECT_EQ(r.wc("A", 1)->vendor_err, 136U);
  EXPECT_LT(r.wc("A", 1)->ms, 1000) << "not held";
  EXPECT_EQ(r.wc("A", 2)->status, ib::kWcWrFlushErr);
}

TEST_F(VerbsWrapper, LocalProtectionErrorAtOnceWithGpuDirectsVendorErrThenFlushes) {
  ProbeResult r = probe(json::array(
      {fault("local_protection_error", json::object(), {{"direction", "send"}}, {{"after_calls", 2}})}));
  ASSERT_EQ(r.wcs.size(), 6U);
  EXPECT_EQ(r.wc("A", 0)->status, ib::kWcSuccess);
  EXPECT_EQ(r.wc("A", 1)->status, 4) << "IBV_WC_LOC_PROT_ERR";
  EXPECT_EQ(r.wc("A", 1)->vendor_err, 81U) << "the syndrome NCCL users report with it";
  EXPECT_LT(r.wc("A", 1)->ms, 1000) << "not held";
  EXPECT_EQ(r.wc("A", 2)->status, ib::kWcWrFlushErr);
  EXPECT_EQ(r.wc("B", 100)->status, ib::kWcSuccess) << "the receiving QP was not targeted";
  ASSERT_EQ(r.injections().size(), 1U);
  EXPECT_EQ(r.injections()[0]["status_name"], "IBV_WC_LOC_PROT_ERR");
}

TEST_F(VerbsWrapper, EveryErrorStatusReachesThePollerExactly) {
  for (const auto& st : ib::kWcStatuses) {
    if (st.value == ib::kWcSuccess) continue;
    ProbeResult r =
        probe(json::array({fault("wc_error", {{"status", st.name}}, {{"direction", "recv"}})}), {}, 1);
    ASSERT_NE(r.wc("B", 100), nullptr) << st.name;
    EXPECT_EQ(r.wc("B", 100)->status, st.value) << st.name;
  }
}

TEST_F(VerbsWrapper, DelayHoldsTheCompletionAndTheLaterOnesOfItsQp) {
  ProbeResult r = probe(json::array({fault("delay", {{"ms", 300}}, {{"direction", "send"}})}));
  ASSERT_EQ(r.wcs.size(), 6U);
  EXPECT_GE(r.wc("A", 0)->ms, 300);
  EXPECT_EQ(r.wc("A", 0)->status, ib::kWcSuccess);
  EXPECT_GE(r.wc("A", 1)->ms, r.wc("A", 0)->ms);
  EXPECT_LT(r.wc("B", 100)->ms, 300) << "another QP is not held";
  ASSERT_EQ(r.injections().size(), 1U);
  EXPECT_EQ(r.injections()[0]["delay_ms"], 300.0);
}

TEST_F(VerbsWrapper, DropLosesExactlyOneCompletion) {
  ProbeResult r =
      probe(json::array({fault("drop", json::object(), {{"direction", "send"}}, {{"after_calls", 2}})}), {},
            3, 800);
  EXPECT_EQ(r.wcs.size(), 5U);
  EXPECT_EQ(r.wc("A", 1), nullptr);
  ASSERT_NE(r.wc("A", 2), nullptr);
  EXPECT_EQ(r.wc("A", 2)->status, ib::kWcSuccess);
}

TEST_F(VerbsWrapper, PortDownFromTheFiringOnThroughBothQueries) {
  ProbeResult r = probe(json::array({fault("port_down")}));
  EXPECT_EQ(r.line_starting("port "), "port state=1 phys=3 speed=32 width=2");
  EXPECT_EQ(r.line_starting("port_op "), "port_op state=1 phys=3 speed=32 width=2") << "stays down";
  ASSERT_EQ(r.injections().size(), 1U);
  EXPECT_EQ(r.injections()[0]["state"], "IBV_PORT_DOWN");
}

TEST_F(VerbsWrapper, LinkDegradeReportsTheLowerSpeedAndWidth) {
  ProbeResult r = probe(json::array({fault("link_degrade", {{"speed", "HDR"}, {"width", "1x"}})}));
  EXPECT_EQ(r.line_starting("port "), "port state=4 phys=5 speed=64 width=1");
  EXPECT_EQ(r.line_starting("port_op "), "port_op state=4 phys=5 speed=64 width=1");
  ProbeResult defaults = probe(json::array({fault("link_degrade")}));
  EXPECT_EQ(defaults.line_starting("port "), "port state=4 phys=5 speed=32 width=1") << "1x, speed unchanged";
  ProbeResult width_2x = probe(json::array({fault("link_degrade", {{"width", "2x"}})}));
  EXPECT_EQ(width_2x.line_starting("port "), "port state=4 phys=5 speed=32 width=16");
}

TEST_F(VerbsWrapper, PostErrorReturnsTheErrnoAndPostsNothing) {
  ProbeResult r = probe(json::array({fault("post_error", {{"errno", "EINVAL"}}, {{"ops", {"post_send"}}})}));
  EXPECT_EQ(r.line_starting("post_send"), "post_send rc=" + std::to_string(EINVAL) + " bad_is_first=1");
  EXPECT_EQ(r.wcs.size(), 4U) << "the failed send posted nothing";
  EXPECT_EQ(r.wc("A", 0), nullptr);
  ProbeResult recv = probe(json::array({fault("post_error", json::object(), {{"ops", {"post_recv"}}})}));
  EXPECT_EQ(recv.line_starting("post_recv"), "post_recv rc=" + std::to_string(ENOMEM));
}

// One port of two (target.port, target.device): what NCCL's port failover (NCCL_IB_RESILIENCY_PORT_FAILOVER,
// 2.29.7 and later) needs, a failing port beside a healthy one. The probe runs a pair on each of the
// stand-in's two ports: A sends to B on port 1, C sends to D on port 2.
TEST_F(VerbsWrapper, AFaultOnPort2HitsOnlyTheQpOnPort2) {
  ProbeResult r = probe(json::array({fault("wc_error", {{"status", "IBV_WC_RETRY_EXC_ERR"}},
                                           {{"direction", "send"}, {"port", 2}}, {{"count", 0}})}),
                        {}, 3, 1500, kWrapper, 2);
  ASSERT_EQ(r.wcs.size(), 12U);
  for (uint64_t id : {0UL, 1UL, 2UL}) {
    EXPECT_EQ(r.wc("A", id)->status, ib::kWcSuccess) << "port 1's QP is not hit, wr " << id;
    EXPECT_EQ(r.wc("B", 100 + id)->status, ib::kWcSuccess);
    EXPECT_EQ(r.wc("D", 100 + id)->status, ib::kWcSuccess) << "receives are not targeted";
  }
  EXPECT_EQ(r.wc("C", 0)->status, ib::kWcRetryExcErr);
  EXPECT_EQ(r.wc("C", 1)->status, ib::kWcRetryExcErr) << "count 0: every send completion of port 2";
  ASSERT_EQ(r.injections().size(), 3U);
  for (const json& e : r.injections()) {
    EXPECT_EQ(e["port"], 2);
    EXPECT_EQ(e["device"], "ncclfi_fake0");
  }
}

TEST_F(VerbsWrapper, RetryExceededOnOneHcaPortLeavesTheOtherPortsQpAlone) {
  ProbeResult r = probe(
      json::array({fault("retry_exceeded", json::object(),
                         {{"direction", "send"}, {"device", "ncclfi_fake0"}, {"port", 1}}, {{"count", 0}})}),
      {{"NCCL_IB_TIMEOUT", "10"}, {"NCCL_IB_RETRY_CNT", "1"}}, 3, 1500, kWrapper, 2);
  ASSERT_EQ(r.wcs.size(), 12U);
  for (uint64_t id : {0UL, 1UL, 2UL})
    EXPECT_EQ(r.wc("A", id)->status, ib::kWcRetryExcErr) << "every one of port 1's";
  for (uint64_t id : {0UL, 1UL, 2UL}) EXPECT_EQ(r.wc("C", id)->status, ib::kWcSuccess) << id;
}

TEST_F(VerbsWrapper, AFaultWithoutPortStillHitsTheQpsOfBothPorts) {
  ProbeResult r =
      probe(json::array({fault("wc_error", json::object(), {{"direction", "send"}}, {{"count", 0}})}), {}, 3,
            1500, kWrapper, 2);
  ASSERT_EQ(r.wcs.size(), 12U);
  EXPECT_EQ(r.wc("A", 0)->status, ib::kWcRemAccessErr);
  EXPECT_EQ(r.wc("C", 0)->status, ib::kWcRemAccessErr);
}

TEST_F(VerbsWrapper, AnotherHcaIsNotHit) {
  ProbeResult r =
      probe(json::array({fault("wc_error", json::object(), {{"device", "mlx5_0"}}, {{"count", 0}}),
                         fault("port_down", json::object(), {{"device", "mlx5_0"}})}),
            {}, 3, 1500, kWrapper, 2);
  ASSERT_EQ(r.wcs.size(), 12U);
  for (const auto& w : r.wcs) EXPECT_EQ(w.status, ib::kWcSuccess);
  EXPECT_EQ(r.line_starting("port "), "port state=4 phys=5 speed=32 width=2");
  EXPECT_TRUE(r.injections().empty());
}

TEST_F(VerbsWrapper, PortDownOnPort1LeavesPort2Active) {
  ProbeResult r = probe(json::array({fault("port_down", json::object(), {{"port", 1}}, {{"count", 0}})}), {},
                        1, 500, kWrapper, 2);
  EXPECT_EQ(r.line_starting("port "), "port state=1 phys=3 speed=32 width=2");
  EXPECT_EQ(r.line_starting("port_op "), "port_op state=1 phys=3 speed=32 width=2");
  EXPECT_EQ(r.line_starting("port2 "), "port2 state=4 phys=5 speed=32 width=2");
  EXPECT_EQ(r.line_starting("port2_op "), "port2_op state=4 phys=5 speed=32 width=2");
  ProbeResult degraded =
      probe(json::array({fault("link_degrade", {{"width", "1x"}}, {{"port", 2}}, {{"count", 0}})}), {}, 1,
            500, kWrapper, 2);
  EXPECT_EQ(degraded.line_starting("port "), "port state=4 phys=5 speed=32 width=2");
  EXPECT_EQ(degraded.line_starting("port2 "), "port2 state=4 phys=5 speed=32 width=1");
}

TEST_F(VerbsWrapper, PostErrorOnPort2RefusesOnlyPort2sPosts) {
  ProbeResult r = probe(json::array({fault("post_error", {{"errno", "EIO"}},
                                           {{"ops", {"post_send"}}, {"port", 2}}, {{"count", 0}})}),
                        {}, 1, 500, kWrapper, 2);
  std::vector<std::string> sends;
  for (const auto& l : r.lines) {
    if (l.rfind("post_send", 0) == 0) sends.push_back(l);
  }
  ASSERT_EQ(sends.size(), 2U);
  EXPECT_EQ(sends[0], "post_send rc=0 bad_is_first=0") << "A, on port 1";
  EXPECT_EQ(sends[1], "post_send rc=" + std::to_string(EIO) + " bad_is_first=1") << "C, on port 2";
  EXPECT_NE(r.wc("A", 0), nullptr);
  EXPECT_EQ(r.wc("C", 0), nullptr);
}

// NCCL calls the hooks from C: an exception thrown under one (here the stand-in's op throws, as a provider
// never would; our own code is behind the same barrier) stops in the hook, which says so on stderr and
// answers as a failing provider does. Before the barrier the exception reached the probe and aborted it.
TEST_F(VerbsWrapper, AHookThatThrowsDoesNotThrowIntoItsCaller) {
  const json never_fires =
      json::array({fault("drop", json::object(), json::object(), {{"after_calls", 1000}})});
  const std::map<std::string, std::string> calls = {{"poll_cq", "ibv_poll_cq"},
                                                    {"post_send", "ibv_post_send"},
                                                    {"post_recv", "ibv_post_recv"},
                                                    {"query_port", "ibv_query_port"}};
  for (const auto& [op, call] : calls) {
    ProbeResult r = probe(never_fires, {{"NCCLFI_FAKE_IBV_THROW", op}}, 1, 200);
    EXPECT_EQ(r.line_starting("patched"), "patched 1") << op;
    EXPECT_EQ(r.line_starting("end"), "end") << op << ": the probe did not run to its end";
    EXPECT_EQ(r.line_starting("ncclfi verbs: internal error in " + call + ": fake " + op + " threw"),
              "ncclfi verbs: internal error in " + call + ": fake " + op + " threw")
        << op;
    if (op == "post_send") {
      EXPECT_EQ(r.line_starting("post_send"), "post_send rc=" + std::to_string(EIO) + " bad_is_first=1");
    } else if (op == "post_recv") {
      EXPECT_EQ(r.line_starting("post_recv"), "post_recv rc=" + std::to_string(EIO));
    } else if (op == "query_port") {
      EXPECT_EQ(r.line_starting("port_op"), "") << "the op failed: no attributes";
    } else {
      EXPECT_TRUE(r.wcs.empty()) << "ibv_poll_cq failed: no completions";
    }
  }
}

// Same seed, same bits: a delay's jitter is the one seeded draw every layer makes (Delay::draw, from the
// fault's seed, its id and the firing), here on the verbs path; the preload's and the shim's tests check
// theirs against the same draw.
TEST_F(VerbsWrapper, DelayJitterIsTheSeededDrawEveryLayerMakes) {
  ProbeResult r = probe(
      json::array({fault("delay", {{"ms", 1}, {"jitter_ms", 40}}, {{"direction", "send"}}, {{"count", 3}})}));
  ASSERT_EQ(r.injections().size(), 3U);
  for (const json& e : r.injections()) {
    const auto firing = e["firing"].get<uint64_t>();
    EXPECT_DOUBLE_EQ(e["delay_ms"].get<double>(), (ncclfi::Delay{1, 40}).draw(7, "f-delay", firing))
        << firing;
  }
}

}  // namespace
