// Wrap mode's `corrupt` on REAL device memory, through the real CUDA driver (GPU machines only; SKIPPED
// elsewhere). The shim wraps the GPU fixture plugin (fixtures/gdr_net_plugin.cc: CUDA pointers advertised,
// device bytes staged through the driver over loopback TCP) and is driven as NCCL's proxy drives it, in
// two processes with a CUDA context current: buffers from cuMemAlloc, registered as NCCL_PTR_CUDA. What
// this proves: messages in device memory arrive whole, the one hit receive has exactly the asked bits flipped
// in device memory, the others none, and the flip does not wait behind work queued on a legacy-synchronising
// stream (as NCCL's kernel that waits for this very receive would be): a stream held by cuStreamWaitValue32
// on a host flag stays held until the receive, corrupted, is done. What it does not: NCCL's own kernels and
// GPUDirect decision (tests/gpu/net_wrap_gdr.sh is the end-to-end attempt).
#include <cuda.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plugin_test_util.h"

namespace ncclfi::plugin_test {
namespace {

using namespace std::chrono_literals;

constexpr int kBits = 8;
constexpr size_t kSizes[] = {4099, (size_t{4} << 20) + 3, 100};

#define CU_CHECK(call) CHILD_CHECK((call) == CUDA_SUCCESS, "%s", #call)

// The primary context of GPU 0 current on this (child) thread, as on NCCL's proxy thread.
void make_context_current() {
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  CU_CHECK(cuInit(0));
  CU_CHECK(cuDeviceGet(&dev, 0));
  CU_CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CU_CHECK(cuCtxSetCurrent(ctx));
}

// Whether a GPU is usable: asked in a child, since CUDA does not survive the fork of a process that
// initialised it.
bool have_gpu() {
  return run_child({}, [] {
           int n = 0;
           return cuInit(0) == CUDA_SUCCESS && cuDeviceGetCount(&n) == CUDA_SUCCESS && n > 0 ? 0 : 1;
         }) == 0;
}

std::string fixture_path() {
  return lib_dir() + "/libnccl-net-ncclfi-test-gdr.so";
}

TEST(NetWrapDeviceCorruptOnGpu, TheHitReceiveInDeviceMemoryHasExactlyTheAskedBitsFlipped) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU: cuInit or cuDeviceGetCount found none";
  const std::string plan =
      write_temp_file("plan.json", nlohmann::json{{"seed", 7},
                                                  {"faults",
                                                   {{{"id", "flip"},
                                                     {"layer", "net"},
                                                     {"kind", "corrupt"},
                                                     {"params", {{"bits", kBits}, {"seed", 3}}},
                                                     {"target", {{"ranks", {1}}, {"ops", {"irecv"}}}},
                                                     {"trigger", {{"after_calls", 1}, {"count", 1}}}}}}}
                                       .dump());
  const std::string dir = plan.substr(0, plan.rfind('/'));
  PairOptions options;
  options.sender_env = {
      {"NCCLFI_PLAN", plan}, {"NCCLFI_EVENTS", dir + "/events.jsonl"}, {"NCCLFI_NET_INNER", fixture_path()}};
  options.receiver_env = options.sender_env;
  options.timeout_s = 60;
  options.output_prefix = dir + "/";
  auto [s, r] = run_pair(
      options,
      [](Endpoint& ep) {
        make_context_current();
        for (size_t size : kSizes) {
          const auto host = byte_pattern(size);
          CUdeviceptr buf = 0;
          CU_CHECK(cuMemAlloc(&buf, size));
          CU_CHECK(cuMemcpyHtoD(buf, host.data(), size));
          void* data = reinterpret_cast<void*>(buf);
          void* mr = nullptr;
          CHILD_CHECK(ep.plugin->reg_mr(ep.comm, data, size, NCCL_PTR_CUDA, &mr) == ncclSuccess, "regMr");
          void* req = nullptr;  // the plugin may ask to retry with a NULL request
          for (int i = 0; i < 1000000 && req == nullptr; ++i) {
            CHILD_CHECK(ep.plugin->isend(ep.comm, data, size, 0, mr, nullptr, &req) == ncclSuccess, "isend");
          }
          int done = 0, got = 0;
          CHILD_CHECK(req && wait_request(*ep.plugin, req, &done, &got, 20s) == ncclSuccess && done, "send");
          CHILD_CHECK(ep.plugin->dereg_mr(ep.comm, mr) == ncclSuccess, "deregMr");
          CU_CHECK(cuMemFree(buf));
        }
        ep.recv_value();
        return 0;
      },
      [&](Endpoint& ep) {
        make_context_current();
        FILE* flips = std::fopen((dir + "/flips.txt").c_str(), "w");
        CHILD_CHECK(flips != nullptr, "flips.txt");
        // A stream of the legacy, synchronising kind held by a wait on a host flag: a copy the shim made
        // on the legacy default stream would queue behind it until the flag is set, after the receive.
        CUstream held = nullptr;
        CU_CHECK(cuStreamCreate(&held, CU_STREAM_DEFAULT));
        void* flag_host = nullptr;
        CU_CHECK(cuMemHostAlloc(&flag_host, sizeof(uint32_t), CU_MEMHOSTALLOC_DEVICEMAP));
        auto* flag = static_cast<volatile uint32_t*>(flag_host);
        *flag = 0;
        CUdeviceptr flag_dev = 0;
        CU_CHECK(cuMemHostGetDevicePointer(&flag_dev, flag_host, 0));
        int message = 0;
        for (size_t size : kSizes) {
          const auto want = byte_pattern(size);
          const size_t posted = size + 64;  // a receive may post more than arrives
          CUdeviceptr buf = 0;
          CU_CHECK(cuMemAlloc(&buf, posted));
          void* data = reinterpret_cast<void*>(buf);
          void* mr = nullptr;
          CHILD_CHECK(ep.plugin->reg_mr(ep.comm, data, posted, NCCL_PTR_CUDA, &mr) == ncclSuccess, "regMr");
          CU_CHECK(cuStreamWaitValue32(held, flag_dev, static_cast<cuuint32_t>(message + 1),
                                       CU_STREAM_WAIT_VALUE_GEQ));
          size_t posted_size = posted;
          int tag = 0;
          void* req = nullptr;
          for (int i = 0; i < 1000000 && req == nullptr; ++i) {
            CHILD_CHECK(
                ep.plugin->irecv(ep.comm, 1, &data, &posted_size, &tag, &mr, nullptr, &req) == ncclSuccess,
                "irecv");
          }
          int done = 0, got = 0;
          CHILD_CHECK(req && wait_request(*ep.plugin, req, &done, &got, 20s) == ncclSuccess && done,
                      "message %d: the receive did not complete while a synchronising stream was held",
                      message);
          CHILD_CHECK(cuStreamQuery(held) == CUDA_ERROR_NOT_READY, "the held stream was released early");
          *flag = static_cast<uint32_t>(message + 1);
          CU_CHECK(cuStreamSynchronize(held));
          CHILD_CHECK(got == static_cast<int>(size), "message %d: %d bytes, sent %zu", message, got, size);
          std::vector<char> back(size);
          CU_CHECK(cuMemcpyDtoH(back.data(), buf, size));
          std::fprintf(flips, "%d\n", bits_differing(back, want));
          CHILD_CHECK(ep.plugin->dereg_mr(ep.comm, mr) == ncclSuccess, "deregMr");
          CU_CHECK(cuMemFree(buf));
          ++message;
        }
        std::fclose(flips);
        ep.send_value(1);
        return 0;
      });
  EXPECT_EQ(s, 0) << read_file(dir + "/sender.log");
  EXPECT_EQ(r, 0) << read_file(dir + "/receiver.log");
  // Exactly one message was hit, with exactly the asked bits; the others arrived whole.
  std::vector<int> flipped;
  std::stringstream flips(read_file(dir + "/flips.txt"));
  for (int n = 0; flips >> n;) flipped.push_back(n);
  ASSERT_EQ(flipped.size(), std::size(kSizes));
  EXPECT_EQ(std::count(flipped.begin(), flipped.end(), kBits), 1);
  EXPECT_EQ(std::count(flipped.begin(), flipped.end(), 0), static_cast<long>(std::size(kSizes)) - 1);
  int device_injections = 0, refused = 0;
  std::stringstream events(read_file(dir + "/events.jsonl"));
  for (std::string line; std::getline(events, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || j.value("event", "") != "inject") continue;
    if (j.value("memory", "") == "device") ++device_injections;
    if (j.contains("effect")) ++refused;
  }
  EXPECT_EQ(device_injections, 1);
  EXPECT_EQ(refused, 0);
}

}  // namespace
}  // namespace ncclfi::plugin_test
