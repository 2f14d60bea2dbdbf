// The ncclNet data-path contracts NCCL relies on (requests, test(), sizes, truncation), checked across
// processes over real sockets.
#include <dirent.h>
#include <dlfcn.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdarg>
#include <cstring>
#include <numeric>
#include <thread>
#include <tuple>

#include <gtest/gtest.h>

#include "ncclfi/params.h"
#include "plugin_test_util.h"
#include "tcp_transport.h"

namespace ncclfi::plugin_test {
namespace {

using namespace std::chrono_literals;

std::vector<char> pattern(size_t size, int salt) {
  std::vector<char> v(size);
  for (size_t i = 0; i < size; ++i)
    v[i] = static_cast<char>((i * 131 + static_cast<size_t>(salt) * 7 + i / 251) & 0xff);
  return v;
}

int count_sockets() {
  int sockets = 0;
  DIR* dir = opendir("/proc/self/fd");
  while (dirent* e = readdir(dir)) {
    char target[256] = {};
    const std::string link = std::string("/proc/self/fd/") + e->d_name;
    if (readlink(link.c_str(), target, sizeof(target) - 1) > 0 && std::strncmp(target, "socket:", 7) == 0)
      ++sockets;
  }
  closedir(dir);
  return sockets;
}

TEST(PluginExports, NewestVersionFirstAndOnlyPluginSymbols) {
  const int code = run_child({}, [] {
    void* dl = dlopen(shim_path().c_str(), RTLD_NOW | RTLD_LOCAL);
    CHILD_CHECK(dl != nullptr, "%s", dlerror());
    for (const char* sym :
         {"ncclNetPlugin_v11", "ncclNetPlugin_v10", "ncclNetPlugin_v9", "ncclNetPlugin_v8"}) {
      CHILD_CHECK(dlsym(dl, sym) != nullptr, "missing %s", sym);
    }
    // Internals (our core library, libfiu) stay hidden behind the version script.
    CHILD_CHECK(dlsym(dl, "fiu_init") == nullptr, "fiu_init is exported");
    CHILD_CHECK(dlsym(dl, "_ZN6ncclfi6Params3getEv") == nullptr, "ncclfi::Params::get is exported");
    std::string error;
    auto plugin = net::LoadedNetPlugin::open(shim_path(), &error);
    CHILD_CHECK(plugin && plugin->version() == 11, "loader picked v%d", plugin ? plugin->version() : 0);
    CHILD_CHECK(std::strcmp(plugin->name(), "ncclfi") == 0, "name %s", plugin->name());
    return 0;
  });
  EXPECT_EQ(code, 0);
}

TEST(PluginProperties, HostOnlyOneRecvConfiguredSpeedAndNoSocketUntilListen) {
  const int code = run_child({{"NCCLFI_NET_SPEED_MBPS", "25000"}}, [] {
    const int before = count_sockets();
    void* ctx = nullptr;
    auto plugin = load_and_init(shim_path(), &ctx);
    ncclNetProperties_v11_t props{};
    CHILD_CHECK(plugin->get_properties(0, &props) == ncclSuccess, "getProperties");
    CHILD_CHECK(props.ptrSupport == NCCL_PTR_HOST, "ptrSupport %d", props.ptrSupport);
    CHILD_CHECK(props.maxRecvs == 1, "maxRecvs %d", props.maxRecvs);
    CHILD_CHECK(props.speed == 25000, "speed %d", props.speed);
    CHILD_CHECK(props.maxP2pBytes > 0 && props.maxP2pBytes <= (size_t{1} << 40), "maxP2pBytes");
    CHILD_CHECK(props.netDeviceType == NCCL_NET_DEVICE_HOST, "device type");
    // Inert until asked: init/devices/getProperties open no socket, so nothing listens.
    CHILD_CHECK(count_sockets() == before, "sockets opened before listen()");
    CHILD_CHECK(plugin->finalize(ctx) == ncclSuccess, "finalize");
    return 0;
  });
  EXPECT_EQ(code, 0);
}

std::string g_logged;  // what the plugin sent to NCCL's logger (child process only)
void capture_logger(ncclDebugLogLevel level, unsigned long flags, const char*, int, const char* fmt, ...) {
  char text[1024];
  va_list args;
  va_start(args, fmt);
  vsnprintf(text, sizeof(text), fmt, args);
  va_end(args);
  g_logged += std::to_string(static_cast<int>(level)) + ":" + std::to_string(flags) + ":" + text + "\n";
}

TEST(PluginLogging, GoesThroughNcclLoggerWithAFixedPrefix) {
  const int code = run_child({{"NCCLFI_NET_INNER", "no-such-plugin-xyz"}}, [] {
    std::string error;
    auto plugin = net::LoadedNetPlugin::open(shim_path(), &error);
    CHILD_CHECK(plugin != nullptr, "%s", error.c_str());
    void* ctx = nullptr;
    CHILD_CHECK(plugin->init(&ctx, 1, nullptr, capture_logger) != ncclSuccess, "init");
    // A WARN (level 2) under every subsystem (NCCL_ALL, as NCCL's own WARN macro passes: under NCCL_NET,
    // NCCL's default NCCL_DEBUG_SUBSYS mask dropped it on a GPU), prefixed, naming the problem.
    const std::string all = std::to_string(static_cast<unsigned long>(NCCL_ALL));
    CHILD_CHECK(g_logged.find("2:" + all + ":NET/ncclfi : ") != std::string::npos, "logged: %s",
                g_logged.c_str());
    CHILD_CHECK(g_logged.find("no-such-plugin-xyz") != std::string::npos, "logged: %s", g_logged.c_str());
    return 0;
  });
  EXPECT_EQ(code, 0);
}

// The persona decides the name NCCL selects the plugin by (NCCL_NET) and its prefix: "ncclfi" by default,
// NCCL's "IB" under NCCLFI_NET_PERSONA=ib and under NCCLFI_QUIET (labs, drills).
TEST(PluginLogging, TheIbPersonaCallsThePluginIbAndWritesNoOwnName) {
  for (const auto& [env, name] : std::vector<std::pair<Env, std::string>>{
           {{}, "ncclfi"}, {{{"NCCLFI_NET_PERSONA", "ib"}}, "IB"}, {{{"NCCLFI_QUIET", "1"}}, "IB"}}) {
    Env with_bad_inner = env;
    with_bad_inner["NCCLFI_NET_INNER"] = "no-such-plugin-xyz";
    const int code = run_child(with_bad_inner, [want = name] {
      std::string error;
      auto plugin = net::LoadedNetPlugin::open(shim_path(), &error);
      CHILD_CHECK(plugin != nullptr, "%s", error.c_str());
      CHILD_CHECK(want == plugin->name(), "the plugin calls itself %s", plugin->name());
      void* ctx = nullptr;
      CHILD_CHECK(plugin->init(&ctx, 1, nullptr, capture_logger) != ncclSuccess, "init");
      const std::string prefix =
          "2:" + std::to_string(static_cast<unsigned long>(NCCL_ALL)) + ":NET/" + want + " : ";
      CHILD_CHECK(g_logged.find(prefix) != std::string::npos, "logged: %s", g_logged.c_str());
      return 0;
    });
    EXPECT_EQ(code, 0) << name;
  }
}

// The first non-loopback interface with an IPv4 address, or "" when the host has none.
std::string first_external_interface() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return "";
  std::string name;
  for (ifaddrs* it = list; it && name.empty(); it = it->ifa_next) {
    if (it->ifa_addr && it->ifa_addr->sa_family == AF_INET && std::strncmp(it->ifa_name, "lo", 2) != 0) {
      name = it->ifa_name;
    }
  }
  freeifaddrs(list);
  return name;
}

TEST(PluginInterfaces, FollowsNcclSocketIfnameSyntax) {
  const std::string ext = first_external_interface();
  if (ext.empty()) GTEST_SKIP() << "no non-loopback IPv4 interface on this host";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "lo"}, {ext, ext}, {"=" + ext, ext}, {ext.substr(0, 2), ext}, {"^docker,virbr", ext}};
  for (const auto& [spec, want] : cases) {
    Env env;
    if (!spec.empty()) env["NCCL_SOCKET_IFNAME"] = spec;
    const int code = run_child(env, [want = want] {
      void* ctx = nullptr;
      auto plugin = load_and_init(shim_path(), &ctx);
      ncclNetProperties_v11_t props{};
      CHILD_CHECK(plugin->get_properties(0, &props) == ncclSuccess, "getProperties");
      CHILD_CHECK(want == props.name, "device %s, want %s", props.name, want.c_str());
      return 0;
    });
    EXPECT_EQ(code, 0) << "NCCL_SOCKET_IFNAME=" << spec;
  }
  // An interface that does not exist fails init, so NCCL falls back to its next network.
  const int code = run_child({{"NCCL_SOCKET_IFNAME", "=nosuchif0"}}, [] {
    std::string error;
    auto plugin = net::LoadedNetPlugin::open(shim_path(), &error);
    void* ctx = nullptr;
    CHILD_CHECK(plugin && plugin->init(&ctx, 1, nullptr, nullptr) != ncclSuccess,
                "init on a missing interface");
    return 0;
  });
  EXPECT_EQ(code, 0);
  // Data really flows over the external interface.
  PairOptions options;
  options.sender_env = {{"NCCL_SOCKET_IFNAME", ext}};
  options.receiver_env = options.sender_env;
  auto [s, r] = run_pair(
      options,
      [](Endpoint& ep) {
        auto buf = pattern(300000, 4);
        ncclResult_t res;
        void* req = post_send(*ep.plugin, ep.comm, buf.data(), buf.size(), 0, &res);
        int done = 0, got = 0;
        CHILD_CHECK(req && wait_request(*ep.plugin, req, &done, &got, 10s) == ncclSuccess && done, "send");
        ep.recv_value();
        return 0;
      },
      [](Endpoint& ep) {
        std::vector<char> buf(300000);
        ncclResult_t res;
        void* req = post_recv(*ep.plugin, ep.comm, buf.data(), buf.size(), 0, &res);
        int done = 0, got = 0;
        CHILD_CHECK(req && wait_request(*ep.plugin, req, &done, &got, 10s) == ncclSuccess && done, "recv");
        CHILD_CHECK(std::memcmp(buf.data(), pattern(300000, 4).data(), buf.size()) == 0, "bytes");
        ep.send_value(1);
        return 0;
      });
  EXPECT_EQ(s, 0);
  EXPECT_EQ(r, 0);
}

TEST(PluginLifecycle, FinalizeToleratesNullAndInitIsPerCommunicator) {
  const int code = run_child({}, [] {
    std::string error;
    auto plugin = net::LoadedNetPlugin::open(shim_path(), &error);
    CHILD_CHECK(plugin != nullptr, "%s", error.c_str());
    CHILD_CHECK(plugin->finalize(nullptr) == ncclSuccess, "finalize(NULL) before init");
    void* a = nullptr;
    void* b = nullptr;
    CHILD_CHECK(plugin->init(&a, 1, nullptr, nullptr) == ncclSuccess, "first init");
    CHILD_CHECK(plugin->init(&b, 2, nullptr, nullptr) == ncclSuccess, "second init");
    CHILD_CHECK(plugin->finalize(a) == ncclSuccess && plugin->finalize(b) == ncclSuccess, "finalize");
    CHILD_CHECK(plugin->finalize(nullptr) == ncclSuccess, "finalize(NULL) after init");
    return 0;
  });
  EXPECT_EQ(code, 0);
}

TEST(PluginConnect, AcceptAndConnectNeverBlock) {
  const int code = run_child({}, [] {
    void* ctx = nullptr;
    auto plugin = load_and_init(shim_path(), &ctx);
    char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
    void* listen_comm = nullptr;
    CHILD_CHECK(plugin->listen(ctx, 0, handle, &listen_comm) == ncclSuccess && listen_comm, "listen");
    // Nobody connects yet: accept must return at once with no comm ("call again").
    void* recv_comm = nullptr;
    double t0 = now_ms();
    CHILD_CHECK(plugin->accept(listen_comm, &recv_comm) == ncclSuccess && recv_comm == nullptr, "accept");
    CHILD_CHECK(now_ms() - t0 < 50, "accept blocked %.1f ms", now_ms() - t0);
    // Connect and accept progress together from one thread, calling again with the same handle.
    char connect_handle[NCCL_NET_HANDLE_MAXSIZE];
    std::memcpy(connect_handle, handle, sizeof(handle));
    void* send_comm = nullptr;
    int connect_calls = 0;
    t0 = now_ms();
    while (!send_comm || !recv_comm) {
      const double call_start = now_ms();
      if (!send_comm) {
        CHILD_CHECK(plugin->connect(ctx, 0, connect_handle, &send_comm) == ncclSuccess, "connect");
        ++connect_calls;
      }
      if (!recv_comm) CHILD_CHECK(plugin->accept(listen_comm, &recv_comm) == ncclSuccess, "accept");
      CHILD_CHECK(now_ms() - call_start < 50, "a call blocked");
      CHILD_CHECK(now_ms() - t0 < 5000, "no connection after 5 s");
    }
    CHILD_CHECK(connect_calls >= 1, "connect calls");
    CHILD_CHECK(plugin->close_send(send_comm) == ncclSuccess, "closeSend");
    CHILD_CHECK(plugin->close_recv(recv_comm) == ncclSuccess, "closeRecv");
    CHILD_CHECK(plugin->close_listen(listen_comm) == ncclSuccess, "closeListen");
    return 0;
  });
  EXPECT_EQ(code, 0);
}

// Sizes that cross every path: empty, inline, just past inline, one slice, striped, odd.
const std::vector<size_t> kSizes = {0, 1, 128, 129, 4096, 65536, 65537, (1 << 20) + 3, 3 << 20, 777};

// Sender side of a kSizes exchange: each size in turn, filled with pattern(size, seed) and waited for;
// then it keeps the connection open until the receiver says it has everything.
int send_each_size(Endpoint& ep, int seed) {
  for (size_t size : kSizes) {
    auto buf = pattern(size, seed);
    ncclResult_t res;
    void* req = post_send(*ep.plugin, ep.comm, buf.data(), size, 0, &res);
    int done = 0, got = 0;
    CHILD_CHECK(req && wait_request(*ep.plugin, req, &done, &got, 10s) == ncclSuccess && done, "send");
  }
  ep.recv_value();
  return 0;
}

// Receiver side: each size into a buffer `slack` bytes larger (so the reported size is checked, not
// the capacity), every byte compared with pattern(size, seed).
int recv_each_size(Endpoint& ep, int seed, size_t slack) {
  for (size_t size : kSizes) {
    std::vector<char> buf(size + slack);
    ncclResult_t res;
    void* req = post_recv(*ep.plugin, ep.comm, buf.data(), buf.size(), 0, &res);
    int done = 0, got = 0;
    CHILD_CHECK(req && wait_request(*ep.plugin, req, &done, &got, 10s) == ncclSuccess && done, "recv");
    CHILD_CHECK(got == static_cast<int>(size), "size %d vs %zu", got, size);
    CHILD_CHECK(std::memcmp(buf.data(), pattern(size, seed).data(), size) == 0, "bytes of %zu", size);
  }
  ep.send_value(1);
  return 0;
}

TEST(PluginDataPath, PostingOrderSizesThroughTestAnd32Outstanding) {
  auto [s, r] = run_pair(
      {},
      [](Endpoint& ep) {
        std::vector<std::vector<char>> bufs;
        std::vector<void*> reqs;
        for (int i = 0; i < 32; ++i)
          bufs.push_back(pattern(kSizes[static_cast<size_t>(i) % kSizes.size()], i));
        for (int i = 0; i < 32; ++i) {
          void* req = nullptr;
          CHILD_CHECK(ep.plugin->isend(ep.comm, bufs[static_cast<size_t>(i)].data(),
                                       bufs[static_cast<size_t>(i)].size(), 0, nullptr, nullptr,
                                       &req) == ncclSuccess &&
                          req,
                      "isend %d not accepted", i);
          reqs.push_back(req);
        }
        // 32 outstanding and none tested: the 33rd must be refused ("call again"), overwriting *request.
        void* extra = reinterpret_cast<void*>(0x1);
        char byte = 0;
        CHILD_CHECK(ep.plugin->isend(ep.comm, &byte, 1, 0, nullptr, nullptr, &extra) == ncclSuccess,
                    "33rd isend");
        CHILD_CHECK(extra == nullptr, "33rd isend got a request");
        for (int i = 0; i < 32; ++i) {
          int done = 0, size = -1;
          CHILD_CHECK(
              wait_request(*ep.plugin, reqs[static_cast<size_t>(i)], &done, &size, 10s) == ncclSuccess &&
                  done,
              "send %d", i);
          CHILD_CHECK(size == static_cast<int>(bufs[static_cast<size_t>(i)].size()), "send %d size %d", i,
                      size);
        }
        ep.recv_value();  // the receiver checked everything
        return 0;
      },
      [](Endpoint& ep) {
        std::vector<std::vector<char>> bufs(32);
        std::vector<void*> reqs;
        for (int i = 0; i < 32; ++i) {
          bufs[static_cast<size_t>(i)].assign(kSizes[static_cast<size_t>(i) % kSizes.size()] + 1000, 0);
          // NCCL pre-sets *request to NCCL_NET_OPTIONAL_RECV_COMPLETION; the plugin must overwrite it.
          void* req = reinterpret_cast<void*>(0x1);
          void* data = bufs[static_cast<size_t>(i)].data();
          size_t size = bufs[static_cast<size_t>(i)].size();
          int tag = 0;
          CHILD_CHECK(ep.plugin->irecv(ep.comm, 1, &data, &size, &tag, nullptr, nullptr, &req) == ncclSuccess,
                      "irecv");
          CHILD_CHECK(req != reinterpret_cast<void*>(0x1) && req != nullptr, "irecv %d left *request", i);
          reqs.push_back(req);
        }
        for (int i = 0; i < 32; ++i) {
          const size_t expect = kSizes[static_cast<size_t>(i) % kSizes.size()];
          int done = 0, size = -1;
          CHILD_CHECK(
              wait_request(*ep.plugin, reqs[static_cast<size_t>(i)], &done, &size, 10s) == ncclSuccess &&
                  done,
              "recv %d", i);
          CHILD_CHECK(size == static_cast<int>(expect), "recv %d: size %d, sent %zu", i, size, expect);
          const auto want = pattern(expect, i);
          CHILD_CHECK(std::memcmp(bufs[static_cast<size_t>(i)].data(), want.data(), expect) == 0,
                      "recv %d bytes", i);
        }
        ep.send_value(1);
        return 0;
      });
  EXPECT_EQ(s, 0);
  EXPECT_EQ(r, 0);
}

TEST(PluginDataPath, TruncationIsAnError) {
  auto [s, r] = run_pair(
      {},
      [](Endpoint& ep) {
        std::vector<char> big(2000, 'x');
        ncclResult_t res;
        void* req = post_send(*ep.plugin, ep.comm, big.data(), big.size(), 0, &res);
        CHILD_CHECK(req, "isend");
        ep.recv_value();
        return 0;
      },
      [](Endpoint& ep) {
        std::vector<char> small(1000);
        ncclResult_t res;
        void* req = post_recv(*ep.plugin, ep.comm, small.data(), small.size(), 0, &res);
        CHILD_CHECK(req, "irecv");
        int done = 0, size = 0;
        const ncclResult_t tr = wait_request(*ep.plugin, req, &done, &size, 5s);
        ep.send_value(1);
        CHILD_CHECK(tr != ncclSuccess, "a 2000-byte send into a 1000-byte receive completed (done=%d)", done);
        return 0;
      });
  EXPECT_EQ(s, 0);
  EXPECT_EQ(r, 0);
}

TEST(PluginProgressMode, AutoPicksTheCallerOnlyOnFewCores) {
  EXPECT_TRUE(ncclfi::net::caller_progress_for("auto", 2));
  EXPECT_TRUE(ncclfi::net::caller_progress_for("auto", ncclfi::net::kCallerProgressMaxCpus - 1));
  EXPECT_FALSE(ncclfi::net::caller_progress_for("auto", ncclfi::net::kCallerProgressMaxCpus));
  EXPECT_FALSE(ncclfi::net::caller_progress_for("auto", 32));
  EXPECT_TRUE(ncclfi::net::caller_progress_for("caller", 32));
  EXPECT_FALSE(ncclfi::net::caller_progress_for("helpers", 2));
}

// Unset NCCLFI_NET_NSOCKS: one data socket when the caller moves the bytes, striping over four when
// helper threads do; a value given is kept (0: everything on the control socket).
TEST(PluginProgressMode, DataSocketsFollowWhoMovesTheBytes) {
  EXPECT_EQ(ncclfi::net::default_nsocks(/*caller_progress=*/true), 1);
  EXPECT_EQ(ncclfi::net::default_nsocks(/*caller_progress=*/false), 4);
  EXPECT_EQ(ncclfi::Params::from_env().net_nsocks, -1) << "unset must leave the choice to the shim";
}

TEST(PluginDataPath, ProgressDoesNotDependOnTest) {
  // Both ends call test() once right after posting (so test() is the one moving bytes, as under NCCL's
  // proxy) and then not at all for 1.5 s: 64 MiB is far more than the socket buffers hold, so the
  // transfer can only finish if the helper threads take over. The single test() after that must say
  // done, with every byte right. Checked in both progress modes.
  // The receiver posts and tests before the sender posts: were both first test() calls running at once,
  // each would keep the other's socket from running dry and the first one alone could move all 64 MiB.
  // Even so, a sender held off the CPU between its post and its first test() (a loaded two-core CI host)
  // leaves the helpers, which run until a test() has, time to move everything: then the first test()
  // already says done and the attempt proves nothing either way. Such an attempt is run again, and three
  // in a row fail the test.
  constexpr size_t kBytes = 64 << 20;
  constexpr int kInconclusive = 2;  // the sender's first test() found the whole send done
  constexpr int kAttempts = 3;
  for (const char* mode : {"caller", "helpers"}) {
    PairOptions options;
    options.sender_env = {{"NCCLFI_NET_PROGRESS", mode}};
    options.receiver_env = options.sender_env;
    int s = kInconclusive, r = 0;
    for (int attempt = 0; attempt < kAttempts && s == kInconclusive; ++attempt) {
      std::tie(s, r) = run_pair(
          options,
          [](Endpoint& ep) {
            std::vector<char> buf = pattern(kBytes, 3);
            ep.recv_value();  // the receiver has posted and tested once
            ncclResult_t res;
            void* req = post_send(*ep.plugin, ep.comm, buf.data(), buf.size(), 0, &res);
            CHILD_CHECK(req, "isend");
            int done = 0, size = 0;
            CHILD_CHECK(ep.plugin->test(req, &done, &size) == ncclSuccess, "first test");
            const bool done_at_first_test = done != 0;
            std::this_thread::sleep_for(1500ms);
            CHILD_CHECK(ep.plugin->test(req, &done, &size) == ncclSuccess && done,
                        "64 MiB send not complete 1.5 s after the last test()");
            ep.recv_value();
            return done_at_first_test ? kInconclusive : 0;
          },
          [](Endpoint& ep) {
            std::vector<char> buf(kBytes);
            ncclResult_t res;
            void* req = post_recv(*ep.plugin, ep.comm, buf.data(), buf.size(), 0, &res);
            CHILD_CHECK(req, "irecv");
            int done = 0, size = 0;
            CHILD_CHECK(ep.plugin->test(req, &done, &size) == ncclSuccess && !done, "first test");
            ep.send_value(0);  // now the sender posts
            std::this_thread::sleep_for(1500ms);
            CHILD_CHECK(ep.plugin->test(req, &done, &size) == ncclSuccess && done,
                        "64 MiB recv not complete 1.5 s after the last test()");
            CHILD_CHECK(size == static_cast<int>(kBytes), "size %d", size);
            CHILD_CHECK(std::memcmp(buf.data(), pattern(kBytes, 3).data(), kBytes) == 0, "bytes differ");
            ep.send_value(1);
            return 0;
          });
    }
    EXPECT_EQ(s, 0) << mode
                    << (s == kInconclusive ? ": the first test() found the send done in every attempt" : "");
    EXPECT_EQ(r, 0) << mode;
  }
}

TEST(PluginDataPath, StripingAndProgressModesAgree) {
  // Each socket count with each progress mode (test() moving the bytes, or only the helpers), and
  // the two ends in different modes: the wire format must not depend on who moves the bytes.
  const std::pair<const char*, const char*> kModes[] = {
      {"caller", "caller"}, {"helpers", "helpers"}, {"caller", "helpers"}};
  for (const char* nsocks : {"0", "1", "8"}) {
    for (const auto& [send_mode, recv_mode] : kModes) {
      PairOptions options;
      options.sender_env = {
          {"NCCLFI_NET_NSOCKS", nsocks}, {"NCCLFI_NET_NTHREADS", "3"}, {"NCCLFI_NET_PROGRESS", send_mode}};
      options.receiver_env = {
          {"NCCLFI_NET_NSOCKS", nsocks}, {"NCCLFI_NET_NTHREADS", "3"}, {"NCCLFI_NET_PROGRESS", recv_mode}};
      auto [s, r] = run_pair(
          options, [](Endpoint& ep) { return send_each_size(ep, 9); },
          [](Endpoint& ep) { return recv_each_size(ep, 9, 1); });
      EXPECT_EQ(s, 0) << "NCCLFI_NET_NSOCKS=" << nsocks << " sender " << send_mode;
      EXPECT_EQ(r, 0) << "NCCLFI_NET_NSOCKS=" << nsocks << " receiver " << recv_mode;
    }
  }
}

TEST(PluginDataPath, EndsWithDifferentFramingSettingsAgree) {
  // The connector adopts the listener's inline limit and slice size from the handle.
  PairOptions options;
  options.sender_env = {
      {"NCCLFI_NET_INLINE", "0"}, {"NCCLFI_NET_MIN_CHUNK", "4096"}, {"NCCLFI_NET_NSOCKS", "4"}};
  options.receiver_env = {
      {"NCCLFI_NET_INLINE", "1024"}, {"NCCLFI_NET_MIN_CHUNK", "1048576"}, {"NCCLFI_NET_NSOCKS", "3"}};
  auto [s, r] = run_pair(
      options, [](Endpoint& ep) { return send_each_size(ep, 11); },
      [](Endpoint& ep) { return recv_each_size(ep, 11, 3); });
  EXPECT_EQ(s, 0);
  EXPECT_EQ(r, 0);
}

// Wrap mode: the shim loads a second build of our transport (exporting v11, or only v8) and forwards.
class PluginWrap : public ::testing::TestWithParam<int> {};

TEST_P(PluginWrap, ForwardsEveryCallAcrossVersions) {
  PairOptions options;
  options.sender_env = {{"NCCLFI_NET_INNER", inner_path(GetParam())}};
  options.receiver_env = options.sender_env;
  auto [s, r] = run_pair(
      options, [](Endpoint& ep) { return send_each_size(ep, 5); },
      [](Endpoint& ep) {
        ncclNetProperties_v11_t props{};
        CHILD_CHECK(ep.plugin->get_properties(0, &props) == ncclSuccess, "props");
        CHILD_CHECK(props.maxRecvs == 1 && props.ptrSupport == NCCL_PTR_HOST, "inner props");
        return recv_each_size(ep, 5, 10);
      });
  EXPECT_EQ(s, 0);
  EXPECT_EQ(r, 0);
}

INSTANTIATE_TEST_SUITE_P(InnerVersions, PluginWrap, ::testing::Values(11, 8));

TEST(PluginWrapSelf, RefusesToWrapItself) {
  const int code = run_child({{"NCCLFI_NET_INNER", shim_path()}}, [] {
    std::string error;
    auto plugin = net::LoadedNetPlugin::open(shim_path(), &error);
    CHILD_CHECK(plugin != nullptr, "%s", error.c_str());
    void* ctx = nullptr;
    CHILD_CHECK(plugin->init(&ctx, 1, nullptr, nullptr) != ncclSuccess, "init wrapping itself succeeded");
    CHILD_CHECK(plugin->finalize(ctx) == ncclSuccess, "finalize after failed init");
    return 0;
  });
  EXPECT_EQ(code, 0);
}

TEST(PluginWrapMissing, UnknownInnerFailsInit) {
  const int code = run_child({{"NCCLFI_NET_INNER", "no-such-plugin-xyz"}}, [] {
    std::string error;
    auto plugin = net::LoadedNetPlugin::open(shim_path(), &error);
    CHILD_CHECK(plugin != nullptr, "%s", error.c_str());
    void* ctx = nullptr;
    CHILD_CHECK(plugin->init(&ctx, 1, nullptr, nullptr) == ncclInvalidUsage,
                "init with a missing inner plugin");
    return 0;
  });
  EXPECT_EQ(code, 0);
}

}  // namespace
}  // namespace ncclfi::plugin_test
