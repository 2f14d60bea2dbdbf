// Wrap mode keeps the wrapped plugin's data path. NO GPU IS USED: the inner plugin is a test-only copy of our
// transport that advertises CUDA pointers and DMA-BUF (NCCLFI_NET_TEST_CUDA_PTRS) while moving host memory,
// and the CUDA driver is the preload tests' host-memory stand-in (NCCLFI_CUDA_DRIVER_LIB), which logs the
// calls it gets. What is checked: the shim passes the inner plugin's pointer support through (and our own
// transport stays host-only), and corrupt on a receive registered as CUDA memory goes through the driver's
// cuMemcpy and flips exactly the asked bits.
#include <gtest/gtest.h>
#include <unistd.h>

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
  EXPECT_EQ(ptr_support_through({{"NCCLFI_NET_INNER", inner_path(11)}}), NCCL_PTR_HOST)
      << "a host-only inner";
  EXPECT_EQ(ptr_support_through({}), NCCL_PTR_HOST) << "our own transport";
}

std::vector<char> pattern(size_t size) {
  std::vector<char> v(size);
  for (size_t i = 0; i < size; ++i) v[i] = static_cast<char>((i * 29 + i / 251) & 0xff);
  return v;
}

TEST(NetWrapGpuDirect, CorruptReachesAReceiveInDeviceMemoryThroughTheCudaDriver) {
#ifndef NCCLFI_TEST_CUDA_DOUBLE
  GTEST_SKIP() << "the host-memory CUDA driver stand-in is built with the preload tests (needs nccl.h)";
#else
  const std::string plan =
      write_temp_file("plan.json", nlohmann::json{{"seed", 7},
                                                  {"faults",
                                                   {{{"id", "flip"},
                                                     {"layer", "net"},
                                                     {"kind", "corrupt"},
                                                     {"params", {{"bits", 5}, {"seed", 3}}},
                                                     {"target", {{"ranks", {1}}}},
                                                     {"trigger", {{"after_calls", 1}}}}}}}
                                       .dump());
  const std::string dir = plan.substr(0, plan.rfind('/'));
  const std::string events = dir + "/events.jsonl";
  const std::string driver_log = dir + "/cuda-driver.log";
  PairOptions options;
  options.sender_env = {{"NCCLFI_PLAN", plan}, {"NCCLFI_EVENTS", events}, {"NCCLFI_NET_INNER", kCudaInner}};
  options.receiver_env = options.sender_env;
  options.receiver_env["NCCLFI_CUDA_DRIVER_LIB"] = NCCLFI_TEST_CUDA_DOUBLE;
  options.receiver_env["NCCL_DOUBLE_LOG"] = driver_log;
  auto [s, r] = run_pair(
      options,
      [](Endpoint& ep) {
        auto buf = pattern(8192);
        ncclResult_t res;
        void* req = post_send(*ep.plugin, ep.comm, buf.data(), buf.size(), 0, &res);
        int done = 0, got = 0;
        CHILD_CHECK(req && wait_request(*ep.plugin, req, &done, &got, 10s) == ncclSuccess && done, "send");
        ep.recv_value();
        return 0;
      },
      [](Endpoint& ep) {
        const auto want = pattern(8192);
        std::vector<char> buf(want.size());
        void* mh = nullptr;
        CHILD_CHECK(ep.plugin->reg_mr(ep.comm, buf.data(), buf.size(), NCCL_PTR_CUDA, &mh) == ncclSuccess,
                    "regMr");
        void* data = buf.data();
        size_t size = buf.size();
        int tag = 0;
        void* req = nullptr;
        for (int i = 0; i < 1000000 && req == nullptr; ++i) {
          CHILD_CHECK(ep.plugin->irecv(ep.comm, 1, &data, &size, &tag, &mh, nullptr, &req) == ncclSuccess,
                      "irecv");
        }
        int done = 0, got = 0;
        CHILD_CHECK(req && wait_request(*ep.plugin, req, &done, &got, 10s) == ncclSuccess && done, "recv");
        int flipped = 0;
        for (size_t k = 0; k < want.size(); ++k) {
          flipped += __builtin_popcount(static_cast<unsigned char>(buf[k] ^ want[k]));
        }
        ep.send_value(1);
        CHILD_CHECK(flipped == 5, "%d bits flipped in the 'device' buffer, asked 5", flipped);
        return 0;
      });
  EXPECT_EQ(s, 0);
  EXPECT_EQ(r, 0);
  std::stringstream lines(read_file(events));
  int device_injections = 0;
  for (std::string line; std::getline(lines, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_discarded() && j.value("event", "") == "inject" && j.value("memory", "") == "device") {
      ++device_injections;
    }
  }
  EXPECT_EQ(device_injections, 1);
  const std::string log = read_file(driver_log);
  EXPECT_NE(log.find("cuMemcpy"), std::string::npos) << "the bytes went through the driver: " << log;
#endif
}

}  // namespace
}  // namespace ncclfi::plugin_test
