// Wrap mode keeps the wrapped plugin's data path. NO GPU IS USED.
//   - Pointer support: over a test-only copy of our transport that claims CUDA pointers and DMA-BUF
//     (NCCLFI_NET_TEST_CUDA_PTRS), the shim passes them through; our own transport stays host-only.
//   - corrupt on device memory: the shim wraps libnccl-net-ncclfi-test-loopback.so (fixtures/, not a copy
//     of the shim: both ends in one process, memcpy, NCCL_PTR_CUDA advertised) and the CUDA driver is a
//     test-only libcuda.so.1 (fixtures/cuda_driver_standin.cc, NCCLFI_CUDA_DRIVER_LIB) that copies host
//     memory and logs each call. The shim's API is driven as NCCL's proxy drives it (regMr, isend, irecv,
//     test), in a child process that sets the environment first.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plugin_test_util.h"

namespace ncclfi::plugin_test {
namespace {

using namespace std::chrono_literals;

const std::string kCudaInner = lib_dir() + "/libnccl-net-ncclfi-test-inner-cuda.so";

int ptr_support_through(const Env& env) {
  const std::string out = write_temp_file("ptr-support.txt", "");
  const int code = run_child(env, [&] {
    void* ctx = nullptr;
    auto plugin = load_and_init(shim_path(), &ctx);
    ncclNetProperties_v11_t props{};
    CHILD_CHECK(plugin->get_properties(0, &props) == ncclSuccess, "getProperties");
    FILE* f = std::fopen(out.c_str(), "w");
    std::fprintf(f, "%d", props.ptrSupport);
    std::fclose(f);
    return 0;
  });
  EXPECT_EQ(code, 0);
  return std::stoi("0" + read_file(out));
}

TEST(NetWrapGpuDirect, TheInnerPluginsPointerSupportPassesThrough) {
  EXPECT_EQ(ptr_support_through({{"NCCLFI_NET_INNER", kCudaInner}}),
            NCCL_PTR_HOST | NCCL_PTR_CUDA | NCCL_PTR_DMABUF);
  EXPECT_EQ(ptr_support_through({{"NCCLFI_NET_INNER", NCCLFI_TEST_LOOPBACK_PLUGIN}}),
            NCCL_PTR_HOST | NCCL_PTR_CUDA)
      << "the loopback inner (no regMrDmaBuf, so no DMA-BUF)";
  EXPECT_EQ(ptr_support_through({{"NCCLFI_NET_INNER", inner_path(11)}}), NCCL_PTR_HOST)
      << "a host-only inner";
  EXPECT_EQ(ptr_support_through({}), NCCL_PTR_HOST) << "our own transport";
}

constexpr size_t kBytes = 8192 + 13;
constexpr int kBits = 5;

// One message through the shim over the loopback inner, both ends in one child process.
struct Exchange {
  int send_type = NCCL_PTR_CUDA;
  int recv_type = NCCL_PTR_CUDA;
  nlohmann::json ops = {"irecv"};  // the corrupt fault's target ops (empty: no ops target)
  Env env;                         // more environment (driver, inner plugin switches)
};

struct Outcome {
  int child = -1;
  int recv_flipped = -1;  // bits of the received bytes that differ from what was sent
  int send_flipped = -1;  // bits of the send buffer that differ from what it held
  uint64_t recv_addr = 0, send_addr = 0;
  std::vector<std::string> driver_calls;  // the stand-in's log, one call a line
  std::vector<std::string> inner_calls;   // the loopback plugin's registrations
  std::vector<nlohmann::json> injections;
  std::string dir;
};

std::vector<std::string> lines_of(const std::string& path) {
  std::vector<std::string> out;
  std::stringstream in(read_file(path));
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

Outcome run_exchange(const Exchange& x) {
  nlohmann::json target = {{"ranks", {0}}};
  if (!x.ops.empty()) target["ops"] = x.ops;
  const nlohmann::json fault = {{"id", "flip"},      {"layer", "net"},
                                {"kind", "corrupt"}, {"params", {{"bits", kBits}, {"seed", 3}}},
                                {"target", target},  {"trigger", {{"count", 1}}}};
  const std::string plan =
      write_temp_file("plan.json", nlohmann::json{{"seed", 7}, {"faults", {fault}}}.dump());
  Outcome o;
  o.dir = plan.substr(0, plan.rfind('/'));
  const std::string result = o.dir + "/result.json";
  Env env = {{"NCCLFI_PLAN", plan},
             {"NCCLFI_EVENTS", o.dir + "/events.jsonl"},
             {"NCCLFI_RANK", "0"},
             {"NCCLFI_NET_INNER", NCCLFI_TEST_LOOPBACK_PLUGIN},
             {"NCCLFI_CUDA_DRIVER_LIB", NCCLFI_TEST_CUDA_STANDIN},
             {"NCCLFI_TEST_CUDA_LOG", o.dir + "/driver.log"},
             {"NCCLFI_TEST_NET_LOG", o.dir + "/inner.log"}};
  for (const auto& [k, v] : x.env) env[k] = v;
  o.child = run_child(env, [&] {
    void* ctx = nullptr;
    auto plugin = load_and_init(shim_path(), &ctx);
    char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
    void* listen_comm = nullptr;
    CHILD_CHECK(plugin->listen(ctx, 0, handle, &listen_comm) == ncclSuccess && listen_comm, "listen");
    void* send_comm = nullptr;
    void* recv_comm = nullptr;
    for (int i = 0; i < 1000 && (!send_comm || !recv_comm); ++i) {
      if (!send_comm) CHILD_CHECK(plugin->connect(ctx, 0, handle, &send_comm) == ncclSuccess, "connect");
      if (!recv_comm) CHILD_CHECK(plugin->accept(listen_comm, &recv_comm) == ncclSuccess, "accept");
    }
    CHILD_CHECK(send_comm && recv_comm, "no connection");
    const auto sent = byte_pattern(kBytes);
    std::vector<char> send_buf = sent;
    std::vector<char> recv_buf(kBytes);
    void* send_mr = nullptr;
    void* recv_mr = nullptr;
    CHILD_CHECK(plugin->reg_mr(send_comm, send_buf.data(), kBytes, x.send_type, &send_mr) == ncclSuccess,
                "regMr send");
    CHILD_CHECK(plugin->reg_mr(recv_comm, recv_buf.data(), kBytes, x.recv_type, &recv_mr) == ncclSuccess,
                "regMr recv");
    void* send_req = nullptr;
    CHILD_CHECK(
        plugin->isend(send_comm, send_buf.data(), kBytes, 0, send_mr, nullptr, &send_req) == ncclSuccess &&
            send_req,
        "isend");
    void* data = recv_buf.data();
    size_t size = kBytes;
    int tag = 0;
    void* recv_req = nullptr;
    CHILD_CHECK(
        plugin->irecv(recv_comm, 1, &data, &size, &tag, &recv_mr, nullptr, &recv_req) == ncclSuccess &&
            recv_req,
        "irecv");
    int done = 0, got = 0;
    CHILD_CHECK(wait_request(*plugin, recv_req, &done, &got, 10s) == ncclSuccess && done, "recv");
    CHILD_CHECK(got == static_cast<int>(kBytes), "received %d bytes", got);
    CHILD_CHECK(wait_request(*plugin, send_req, &done, &got, 10s) == ncclSuccess && done, "send");
    CHILD_CHECK(plugin->dereg_mr(send_comm, send_mr) == ncclSuccess, "deregMr send");
    CHILD_CHECK(plugin->dereg_mr(recv_comm, recv_mr) == ncclSuccess, "deregMr recv");
    const nlohmann::json r = {{"recv_flipped", bits_differing(recv_buf, sent)},
                              {"send_flipped", bits_differing(send_buf, sent)},
                              {"recv_addr", reinterpret_cast<uintptr_t>(recv_buf.data())},
                              {"send_addr", reinterpret_cast<uintptr_t>(send_buf.data())}};
    FILE* f = std::fopen(result.c_str(), "w");
    std::fprintf(f, "%s", r.dump().c_str());
    std::fclose(f);
    return 0;
  });
  if (auto r = nlohmann::json::parse(read_file(result), nullptr, false); r.is_object()) {
    o.recv_flipped = r["recv_flipped"];
    o.send_flipped = r["send_flipped"];
    o.recv_addr = r["recv_addr"];
    o.send_addr = r["send_addr"];
  }
  o.driver_calls = lines_of(o.dir + "/driver.log");
  o.inner_calls = lines_of(o.dir + "/inner.log");
  for (const auto& line : lines_of(o.dir + "/events.jsonl")) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_discarded() && j.value("event", "") == "inject") o.injections.push_back(j);
  }
  return o;
}

std::vector<std::string> copies(const Outcome& o) {
  std::vector<std::string> out;
  for (const auto& call : o.driver_calls) {
    if (call.rfind("cuMemcpyAsync ", 0) == 0) out.push_back(call);
  }
  return out;
}

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%#llx", static_cast<unsigned long long>(v));
  return buf;
}

// The receive registered as CUDA memory: the received bytes leave the "device" through the driver, come
// back with exactly the asked bits flipped, on a non-blocking stream, and the event says device memory.
void expect_flipped_through_the_driver(const Outcome& o) {
  ASSERT_EQ(o.child, 0) << "see the child's stderr above";
  EXPECT_EQ(o.recv_flipped, kBits);
  EXPECT_EQ(o.send_flipped, 0);
  const auto c = copies(o);
  ASSERT_EQ(c.size(), 2u) << "one copy each way through cuMemcpyAsync";
  const std::string size = " " + std::to_string(kBytes);
  // "cuMemcpyAsync <dst> <src> <bytes>": device to host first (src is the receive buffer), then back.
  EXPECT_NE(c[0].find(" " + hex(o.recv_addr) + size), std::string::npos) << c[0];
  EXPECT_EQ(c[1].rfind("cuMemcpyAsync " + hex(o.recv_addr) + " ", 0), 0u) << c[1];
  EXPECT_NE(c[1].find(size), std::string::npos) << c[1];
  EXPECT_NE(std::find(o.driver_calls.begin(), o.driver_calls.end(), "cuStreamCreate flags=1"),
            o.driver_calls.end())
      << "the copies run on a non-blocking stream";
  ASSERT_EQ(o.injections.size(), 1u);
  EXPECT_EQ(o.injections[0].value("memory", ""), "device");
  EXPECT_FALSE(o.injections[0].contains("effect"));
  // The inner plugin was asked to register CUDA memory: the shim forwards the type.
  EXPECT_NE(
      std::find(o.inner_calls.begin(), o.inner_calls.end(), "regMr type=" + std::to_string(NCCL_PTR_CUDA)),
      o.inner_calls.end());
}

TEST(NetWrapDeviceCorrupt, AReceiveInDeviceMemoryFlipsThroughTheCudaDriver) {
  expect_flipped_through_the_driver(run_exchange({}));
}

// An inner plugin may hand back NULL registration handles (NCCL's socket plugin does): the shim's own
// handle still knows the memory is a device's.
TEST(NetWrapDeviceCorrupt, AnInnerPluginsNullRegistrationHandleDoesNotHideDeviceMemory) {
  Exchange x;
  x.env["NCCLFI_TEST_NET_NULL_MR"] = "1";
  expect_flipped_through_the_driver(run_exchange(x));
}

// corrupt acts on receives (its one point is net/irecv): a send buffer in device memory keeps its bytes,
// the driver never copies it, and the flip lands in the receive (here in host memory).
TEST(NetWrapDeviceCorrupt, ASendInDeviceMemoryIsNeverTouched) {
  Exchange x;
  x.ops = nlohmann::json::array();  // every point the kind can hit
  x.recv_type = NCCL_PTR_HOST;
  const Outcome o = run_exchange(x);
  ASSERT_EQ(o.child, 0);
  EXPECT_EQ(o.send_flipped, 0);
  EXPECT_EQ(o.recv_flipped, kBits);
  EXPECT_TRUE(copies(o).empty()) << "the driver never copied the send buffer";
  ASSERT_EQ(o.injections.size(), 1u);
  EXPECT_EQ(o.injections[0].value("point", ""), "net/irecv");
  EXPECT_EQ(o.injections[0].value("memory", ""), "host");
}

TEST(NetWrapDeviceCorrupt, AReceiveInHostMemoryFlipsInPlainMemory) {
  Exchange x;
  x.recv_type = NCCL_PTR_HOST;
  const Outcome o = run_exchange(x);
  ASSERT_EQ(o.child, 0);
  EXPECT_EQ(o.recv_flipped, kBits);
  EXPECT_TRUE(copies(o).empty()) << "host memory is not copied through the driver";
  ASSERT_EQ(o.injections.size(), 1u);
  EXPECT_EQ(o.injections[0].value("memory", ""), "host");
  EXPECT_FALSE(o.injections[0].contains("effect"));
}

// Without the driver (or a context) the fault is refused where it fires: the buffer keeps its bytes and
// the event says "none: why", which the judge does not count as an injection.
TEST(NetWrapDeviceCorrupt, WithoutTheDriverTheFaultIsRefusedWithAReason) {
  Exchange x;
  x.env["NCCLFI_CUDA_DRIVER_LIB"] = "/nonexistent/libcuda.so.1";
  const Outcome o = run_exchange(x);
  ASSERT_EQ(o.child, 0);
  EXPECT_EQ(o.recv_flipped, 0);
  ASSERT_EQ(o.injections.size(), 1u);
  EXPECT_EQ(o.injections[0].value("effect", ""),
            "none: cannot load the CUDA driver /nonexistent/libcuda.so.1");
  EXPECT_FALSE(o.injections[0].contains("memory"));
}

TEST(NetWrapDeviceCorrupt, WithoutACudaContextTheFaultIsRefusedWithAReason) {
  Exchange x;
  x.env["NCCLFI_TEST_CUDA_NO_CONTEXT"] = "1";
  const Outcome o = run_exchange(x);
  ASSERT_EQ(o.child, 0);
  EXPECT_EQ(o.recv_flipped, 0);
  EXPECT_TRUE(copies(o).empty());
  ASSERT_EQ(o.injections.size(), 1u);
  EXPECT_EQ(o.injections[0].value("effect", ""),
            "none: no CUDA context is current on the thread that posted the receive");
}

#ifdef NCCLFI_TEST_GDR_FIXTURE
// The GPU test's inner plugin (tests/gpu/fixtures/gdr_net_plugin.cc) checked here without a GPU, under the
// shim, across two processes: its libcuda.so.1 is the stand-in, so its "device" staging copies are memcpy.
// Messages registered as CUDA memory arrive whole (one far larger than the socket buffers, moved in pieces
// by test() calls), and the shim's corrupt flips exactly the asked bits of the one receive it hits.
TEST(NetWrapDeviceCorrupt, TheGpuTestsInnerPluginMovesDeviceBytesUnderTheShim) {
  const std::string plan =
      write_temp_file("plan.json", nlohmann::json{{"seed", 7},
                                                  {"faults",
                                                   {{{"id", "flip"},
                                                     {"layer", "net"},
                                                     {"kind", "corrupt"},
                                                     {"params", {{"bits", kBits}, {"seed", 3}}},
                                                     {"target", {{"ranks", {1}}}},
                                                     {"trigger", {{"after_calls", 2}, {"count", 1}}}}}}}
                                       .dump());
  const std::string dir = plan.substr(0, plan.rfind('/'));
  PairOptions options;
  options.preload_library = NCCLFI_TEST_CUDA_STANDIN;
  options.sender_env = {{"NCCLFI_PLAN", plan},
                        {"NCCLFI_EVENTS", dir + "/events.jsonl"},
                        {"NCCLFI_NET_INNER", NCCLFI_TEST_GDR_FIXTURE},
                        {"NCCLFI_CUDA_DRIVER_LIB", NCCLFI_TEST_CUDA_STANDIN}};
  options.receiver_env = options.sender_env;
  static constexpr size_t kSizes[] = {17, (size_t{8} << 20) + 3, 100};
  auto [s, r] = run_pair(
      options,
      [](Endpoint& ep) {
        for (size_t size : kSizes) {
          auto buf = byte_pattern(size);
          void* mr = nullptr;
          CHILD_CHECK(ep.plugin->reg_mr(ep.comm, buf.data(), size, NCCL_PTR_CUDA, &mr) == ncclSuccess,
                      "regMr");
          void* req = nullptr;
          for (int i = 0; i < 1000000 && req == nullptr; ++i) {
            CHILD_CHECK(ep.plugin->isend(ep.comm, buf.data(), size, 0, mr, nullptr, &req) == ncclSuccess,
                        "isend");
          }
          int done = 0, got = 0;
          CHILD_CHECK(req && wait_request(*ep.plugin, req, &done, &got, 20s) == ncclSuccess && done, "send");
          CHILD_CHECK(ep.plugin->dereg_mr(ep.comm, mr) == ncclSuccess, "deregMr");
        }
        ep.recv_value();
        return 0;
      },
      [](Endpoint& ep) {
        int message = 0;
        for (size_t size : kSizes) {
          const auto want = byte_pattern(size);
          std::vector<char> buf(size + 64);  // a receive may post more than arrives
          void* mr = nullptr;
          CHILD_CHECK(ep.plugin->reg_mr(ep.comm, buf.data(), buf.size(), NCCL_PTR_CUDA, &mr) == ncclSuccess,
                      "regMr");
          void* data = buf.data();
          size_t posted = buf.size();
          int tag = 0;
          void* req = nullptr;
          for (int i = 0; i < 1000000 && req == nullptr; ++i) {
            CHILD_CHECK(ep.plugin->irecv(ep.comm, 1, &data, &posted, &tag, &mr, nullptr, &req) == ncclSuccess,
                        "irecv");
          }
          int done = 0, got = 0;
          CHILD_CHECK(req && wait_request(*ep.plugin, req, &done, &got, 20s) == ncclSuccess && done, "recv");
          CHILD_CHECK(got == static_cast<int>(size), "message %d: %d bytes, sent %zu", message, got, size);
          buf.resize(size);
          const int flipped = bits_differing(buf, want);
          CHILD_CHECK(flipped == (message == 1 ? kBits : 0), "message %d: %d bits flipped", message, flipped);
          CHILD_CHECK(ep.plugin->dereg_mr(ep.comm, mr) == ncclSuccess, "deregMr");
          ++message;
        }
        ep.send_value(1);
        return 0;
      });
  EXPECT_EQ(s, 0);
  EXPECT_EQ(r, 0);
  int device_injections = 0;
  for (const auto& line : lines_of(dir + "/events.jsonl")) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_discarded() && j.value("event", "") == "inject" && j.value("memory", "") == "device") {
      ++device_injections;
    }
  }
  EXPECT_EQ(device_injections, 1);
}
#endif

}  // namespace
}  // namespace ncclfi::plugin_test
