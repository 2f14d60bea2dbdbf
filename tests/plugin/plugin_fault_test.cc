// Each net fault's effect, measured across processes over real sockets.
#include <poll.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ncclfi/effects.h"
#include "plugin_test_util.h"

namespace ncclfi::plugin_test {
namespace {

using namespace std::chrono_literals;

std::vector<char> pattern(size_t size) {
  std::vector<char> v(size);
  for (size_t i = 0; i < size; ++i) v[i] = static_cast<char>((i * 37 + i / 253) & 0xff);
  return v;
}

// Timing on a shared CI host: scheduling hiccups only ever add time, so the estimates compare minima
// and medians, and a measurement may be repeated (up to kAttempts) until one is free of hiccups. The
// bounds that do not depend on the host (never early, never faster than the throttle) hold for every
// sample.
constexpr int kAttempts = 5;

// A plan file with one fault, and the event log the children write.
struct PlanFiles {
  std::string plan;
  std::string events;
};
PlanFiles plan_with(const nlohmann::json& fault) {
  nlohmann::json plan = {{"seed", 7}, {"faults", nlohmann::json::array({fault})}};
  PlanFiles files;
  files.plan = write_temp_file("plan.json", plan.dump());
  files.events = files.plan.substr(0, files.plan.rfind('/')) + "/events.jsonl";
  return files;
}

PairOptions options_for(const PlanFiles& files) {
  PairOptions options;
  options.sender_env = {{"NCCLFI_PLAN", files.plan}, {"NCCLFI_EVENTS", files.events}};
  options.receiver_env = options.sender_env;
  return options;
}

std::vector<nlohmann::json> injections(const std::string& events_path) {
  std::vector<nlohmann::json> out;
  std::stringstream lines(read_file(events_path));
  std::string line;
  while (std::getline(lines, line)) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_discarded() && j.value("event", "") == "inject") out.push_back(j);
  }
  return out;
}

// Sends `count` messages of `size` one after another; returns each one's post-to-done time in ms.
std::vector<double> timed_sends(Endpoint& ep, int count, size_t size) {
  std::vector<double> ms;
  auto buf = pattern(size);
  for (int i = 0; i < count; ++i) {
    ncclResult_t res;
    const double t0 = now_ms();
    void* req = post_send(*ep.plugin, ep.comm, buf.data(), size, 0, &res);
    int done = 0, got = 0;
    CHILD_CHECK(req && wait_request(*ep.plugin, req, &done, &got, 10s) == ncclSuccess && done, "send %d", i);
    ms.push_back(now_ms() - t0);
  }
  return ms;
}

// Receives messages of up to `size` bytes until the sender says it is done (it decides how many attempts
// it needs), then acks so the sender keeps its connection open until the receiver stops.
int receive_until_sender_done(Endpoint& ep, size_t size) {
  std::vector<char> buf(size);
  for (;;) {
    ncclResult_t res;
    void* req = post_recv(*ep.plugin, ep.comm, buf.data(), buf.size(), 0, &res);
    int done = 0, got = 0;
    while (!done) {
      CHILD_CHECK(ep.plugin->test(req, &done, &got) == ncclSuccess, "test");
      pollfd pfd{ep.from_peer, POLLIN, 0};
      if (!done && poll(&pfd, 1, 0) == 1) {
        ep.recv_value();
        ep.send_value(1);
        return 0;
      }
    }
  }
}

int receive_all(Endpoint& ep, int count, size_t size) {
  std::vector<char> buf(size);
  for (int i = 0; i < count; ++i) {
    ncclResult_t res;
    void* req = post_recv(*ep.plugin, ep.comm, buf.data(), size, 0, &res);
    int done = 0, got = 0;
    CHILD_CHECK(req && wait_request(*ep.plugin, req, &done, &got, 10s) == ncclSuccess && done, "recv %d", i);
  }
  return 0;
}

TEST(NetFaultDelay, CompletionHeldForTheAskedTime) {
  // Only sends of at least 2048 bytes are delayed (min_bytes); 1 KiB sends are the baseline.
  const auto files = plan_with({{"id", "slow"},
                                {"layer", "net"},
                                {"kind", "delay"},
                                {"params", {{"ms", 100}}},
                                {"target", {{"ranks", {0}}, {"direction", "send"}, {"min_bytes", 2048}}},
                                {"trigger", {{"count", 0}}}});
  auto [s, r] = run_pair(
      options_for(files),
      [](Endpoint& ep) {
        double added = 0;
        for (int attempt = 0; attempt < kAttempts; ++attempt) {
          std::vector<double> baseline, delayed;
          for (int i = 0; i < 3; ++i) {
            baseline.push_back(timed_sends(ep, 1, 1024)[0]);
            delayed.push_back(timed_sends(ep, 1, 4096)[0]);
            CHILD_CHECK(delayed.back() >= 100.0, "a delayed send completed after %.3f ms", delayed.back());
          }
          added = *std::min_element(delayed.begin(), delayed.end()) -
                  *std::min_element(baseline.begin(), baseline.end());
          std::fprintf(stderr, "delay: attempt %d: added %.3f ms (asked 100)\n", attempt, added);
          if (std::fabs(added - 100.0) <= 2.0) break;
        }
        ep.send_value(-1);
        ep.recv_value();
        CHILD_CHECK(std::fabs(added - 100.0) <= 2.0, "added %.3f ms, asked 100 ms", added);
        return 0;
      },
      [](Endpoint& ep) { return receive_until_sender_done(ep, 4096); });
  EXPECT_EQ(s, 0);
  EXPECT_EQ(r, 0);
  const auto inj = injections(files.events);
  ASSERT_GE(inj.size(), 3u);
  EXPECT_EQ(inj[0]["fault_id"], "slow");
  EXPECT_EQ(inj[0]["rank"], 0);
  EXPECT_EQ(inj[0]["bytes"], 4096);
  EXPECT_TRUE(inj[0].contains("request"));
  EXPECT_TRUE(inj[0].contains("ts_ns"));
}

// Same seed, same bits: each firing's delay is the seeded draw every layer makes (Delay::draw: the fault's
// seed, its id, the firing on the thread that fired), the one the preload's and the verbs wrapper's tests
// check theirs against.
TEST(NetFaultDelay, JitterIsTheSeededDrawEveryLayerMakes) {
  const auto files = plan_with({{"id", "jit"},
                                {"layer", "net"},
                                {"kind", "delay"},
                                {"params", {{"ms", 1}, {"jitter_ms", 30}}},
                                {"target", {{"ranks", {0}}, {"direction", "send"}}},
                                {"trigger", {{"count", 3}}}});
  auto [s, r] = run_pair(
      options_for(files),
      [](Endpoint& ep) {
        timed_sends(ep, 3, 512);
        return 0;
      },
      [](Endpoint& ep) { return receive_all(ep, 3, 512); });
  EXPECT_EQ(s, 0);
  EXPECT_EQ(r, 0);
  const auto inj = injections(files.events);
  ASSERT_EQ(inj.size(), 3u);
  for (const auto& e : inj) {
    const auto firing = e["firing"].get<uint64_t>();
    EXPECT_DOUBLE_EQ(e["delay_ms"].get<double>(), (ncclfi::Delay{1, 30}).draw(7, "jit", firing)) << firing;
  }
}

TEST(NetFaultDelay, JitterStaysWithinItsBound) {
  const auto files = plan_with({{"id", "jit"},
                                {"layer", "net"},
                                {"kind", "delay"},
                                {"params", {{"ms", 50}, {"jitter_ms", 20}}},
                                {"target", {{"ranks", {0}}, {"direction", "send"}}},
                                {"trigger", {{"count", 0}}}});
  auto [s, r] = run_pair(
      options_for(files),
      [](Endpoint& ep) {
        bool within = false;
        for (int attempt = 0; attempt < kAttempts && !within; ++attempt) {
          auto ms = timed_sends(ep, 7, 512);
          for (double m : ms) CHILD_CHECK(m >= 50.0, "completed after %.3f ms, before the 50 ms delay", m);
          std::sort(ms.begin(), ms.end());
          CHILD_CHECK(ms[6] - ms[0] > 0.5, "no jitter: %.3f..%.3f", ms[0], ms[6]);
          within = ms[3] <= 72.0;  // the median of 50 + U(0, 20) ms, plus 2 ms
          std::fprintf(stderr, "jitter: attempt %d: %.2f..%.2f ms, median %.2f\n", attempt, ms[0], ms[6],
                       ms[3]);
        }
        ep.send_value(-1);
        ep.recv_value();
        CHILD_CHECK(within, "the median stayed above 72 ms in every attempt");
        return 0;
      },
      [](Endpoint& ep) { return receive_until_sender_done(ep, 512); });
  EXPECT_EQ(s, 0);
  EXPECT_EQ(r, 0);
}

// Streams `count` messages with a sliding window of kWindow requests in flight (as NCCL's proxy
// does); returns the seconds from the first post to the last completion.
template <typename Post>
double stream_window(Endpoint& ep, int count, size_t msg, Post post) {
  constexpr int kWindow = 8;
  std::vector<std::vector<char>> bufs(kWindow, pattern(msg));
  std::vector<void*> inflight(kWindow, nullptr);
  int posted = 0, completed = 0;
  const double t0 = now_ms();
  while (completed < count) {
    for (size_t slot = 0; slot < kWindow; ++slot) {
      if (!inflight[slot] && posted < count) {
        CHILD_CHECK(post(bufs[slot].data(), &inflight[slot]) == ncclSuccess, "post");
        if (inflight[slot]) ++posted;
      }
      if (inflight[slot]) {
        int done = 0, got = 0;
        CHILD_CHECK(ep.plugin->test(inflight[slot], &done, &got) == ncclSuccess, "test");
        if (done) {
          inflight[slot] = nullptr;
          ++completed;
        }
      }
    }
    std::this_thread::yield();
  }
  return (now_ms() - t0) / 1000.0;
}

TEST(NetFaultThrottle, RateWithinFivePercent) {
  const auto files = plan_with({{"id", "thr"},
                                {"layer", "net"},
                                {"kind", "throttle"},
                                {"params", {{"gbps", 1.0}}},
                                {"target", {{"ranks", {1}}, {"direction", "recv"}}}});
  constexpr size_t kMsg = 1 << 20;
  constexpr int kCount = 48;
  auto [s, r] = run_pair(
      options_for(files),
      [](Endpoint& ep) {
        for (int attempt = 0; attempt < kAttempts; ++attempt) {
          stream_window(ep, kCount, kMsg, [&](char* data, void** req) {
            return ep.plugin->isend(ep.comm, data, kMsg, 0, nullptr, nullptr, req);
          });
          if (ep.recv_value() == 1) break;  // the receiver measured a rate within bounds
        }
        return 0;
      },
      [](Endpoint& ep) {
        // The throttle stays on the connection once fired, so every attempt measures the same link.
        double gbps = 0;
        for (int attempt = 0; attempt < kAttempts; ++attempt) {
          const double seconds = stream_window(ep, kCount, kMsg, [&](char* data, void** req) {
            size_t size = kMsg;
            int tag = 0;
            void* d = data;
            return ep.plugin->irecv(ep.comm, 1, &d, &size, &tag, nullptr, nullptr, req);
          });
          gbps = static_cast<double>(kMsg) * kCount * 8 / seconds / 1e9;
          std::fprintf(stderr, "throttle: attempt %d: asked 1.000 Gbit/s, observed %.4f Gbit/s\n", attempt,
                       gbps);
          CHILD_CHECK(gbps <= 1.05, "faster than the throttle: %.4f Gbit/s", gbps);
          const bool within = std::fabs(gbps - 1.0) <= 0.05;
          ep.send_value(within ? 1 : 0);
          if (within) break;
        }
        CHILD_CHECK(std::fabs(gbps - 1.0) <= 0.05, "observed %.4f Gbit/s", gbps);
        return 0;
      });
  EXPECT_EQ(s, 0);
  EXPECT_EQ(r, 0);
  EXPECT_EQ(injections(files.events).size(), 1u);
}

TEST(NetFaultDrop, DroppedRequestNeverCompletesOthersDo) {
  const auto files = plan_with({{"id", "drop1"},
                                {"layer", "net"},
                                {"kind", "drop"},
                                {"target", {{"ranks", {1}}, {"direction", "recv"}, {"peer", 0}}},
                                {"trigger", {{"after_calls", 3}}}});
  auto [s, r] = run_pair(
      options_for(files),
      [](Endpoint& ep) {
        auto ms = timed_sends(ep, 6, 70000);
        ep.recv_value();
        return 0;
      },
      [](Endpoint& ep) {
        std::vector<std::vector<char>> bufs(6, std::vector<char>(70000));
        std::vector<void*> reqs;
        for (auto& b : bufs) {
          ncclResult_t res;
          reqs.push_back(post_recv(*ep.plugin, ep.comm, b.data(), b.size(), 0, &res));
          CHILD_CHECK(reqs.back(), "irecv");
        }
        for (size_t i = 0; i < reqs.size(); ++i) {
          if (i == 2) continue;
          int done = 0, got = 0;
          CHILD_CHECK(wait_request(*ep.plugin, reqs[i], &done, &got, 10s) == ncclSuccess && done, "recv %zu",
                      i);
          CHILD_CHECK(std::memcmp(bufs[i].data(), pattern(70000).data(), 70000) == 0, "recv %zu bytes", i);
        }
        int done = 0, got = 0;
        CHILD_CHECK(wait_request(*ep.plugin, reqs[2], &done, &got, 1000ms) == ncclSuccess, "test on dropped");
        CHILD_CHECK(!done, "the dropped request completed");
        ep.send_value(1);
        return 0;
      });
  EXPECT_EQ(s, 0);
  EXPECT_EQ(r, 0);
  const auto inj = injections(files.events);
  ASSERT_EQ(inj.size(), 1u);
  EXPECT_EQ(inj[0]["peer"], 0);
  EXPECT_EQ(inj[0]["point"], "net/irecv");
  EXPECT_EQ(inj[0]["call"], 3);
}

TEST(NetFaultDrop, OtherPeerDoesNotMatch) {
  const auto files = plan_with({{"id", "drop1"},
                                {"layer", "net"},
                                {"kind", "drop"},
                                {"target", {{"ranks", {1}}, {"peer", 3}}},
                                {"trigger", {{"count", 0}}}});
  auto [s, r] = run_pair(
      options_for(files),
      [](Endpoint& ep) {
        timed_sends(ep, 3, 100);
        return 0;
      },
      [](Endpoint& ep) { return receive_all(ep, 3, 100); });
  EXPECT_EQ(s, 0);
  EXPECT_EQ(r, 0);
  EXPECT_TRUE(injections(files.events).empty());
}

TEST(NetFaultCorrupt, FlipsExactlyTheAskedBits) {
  for (int bits : {1, 7, 64}) {
    const auto files = plan_with({{"id", "flip"},
                                  {"layer", "net"},
                                  {"kind", "corrupt"},
                                  {"params", {{"bits", bits}, {"seed", 3}}},
                                  {"target", {{"ranks", {1}}}},
                                  {"trigger", {{"after_calls", 2}}}});
    auto [s, r] = run_pair(
        options_for(files),
        [](Endpoint& ep) {
          timed_sends(ep, 3, 65536 + 17);
          return 0;
        },
        [bits](Endpoint& ep) {
          const auto want = pattern(65536 + 17);
          for (int i = 0; i < 3; ++i) {
            std::vector<char> buf(want.size());
            ncclResult_t res;
            void* req = post_recv(*ep.plugin, ep.comm, buf.data(), buf.size(), 0, &res);
            int done = 0, got = 0;
            CHILD_CHECK(req && wait_request(*ep.plugin, req, &done, &got, 10s) == ncclSuccess && done,
                        "recv");
            const int flipped = bits_differing(want, buf);
            CHILD_CHECK(flipped == (i == 1 ? bits : 0), "message %d: %d bits flipped, asked %d", i, flipped,
                        bits);
          }
          return 0;
        });
    EXPECT_EQ(s, 0) << bits << " bits";
    EXPECT_EQ(r, 0) << bits << " bits";
    EXPECT_EQ(injections(files.events).size(), 1u);
  }
}

// Same seed, same bits: the bits a corrupt flips are those flip_bits chooses from the corruption seed every
// layer draws (corrupt_seed: the fault's own seed, its id, the firing), the seed the preload's choice of
// elements comes from too.
TEST(NetFaultCorrupt, FlipsTheBitsOfTheSharedCorruptionSeed) {
  constexpr size_t kSize = 4096;
  const auto files = plan_with({{"id", "flip"},
                                {"layer", "net"},
                                {"kind", "corrupt"},
                                {"params", {{"bits", 5}, {"seed", 3}}},
                                {"target", {{"ranks", {1}}}},
                                {"trigger", {{"count", 2}}}});
  auto [s, r] = run_pair(
      options_for(files),
      [](Endpoint& ep) {
        timed_sends(ep, 2, kSize);
        return 0;
      },
      [](Endpoint& ep) {
        for (uint64_t firing = 1; firing <= 2; ++firing) {
          std::vector<char> want = pattern(kSize);
          ncclfi::flip_bits(want.data(), want.size(), 5, ncclfi::corrupt_seed(3, 7, "flip", firing));
          std::vector<char> buf(kSize);
          ncclResult_t res;
          void* req = post_recv(*ep.plugin, ep.comm, buf.data(), buf.size(), 0, &res);
          int done = 0, got = 0;
          CHILD_CHECK(req && wait_request(*ep.plugin, req, &done, &got, 10s) == ncclSuccess && done, "recv");
          CHILD_CHECK(buf == want, "firing %d: not the bits of the shared corruption seed",
                      static_cast<int>(firing));
        }
        return 0;
      });
  EXPECT_EQ(s, 0);
  EXPECT_EQ(r, 0);
  EXPECT_EQ(injections(files.events).size(), 2u);
}

TEST(NetFaultError, IsendReturnsTheAskedCode) {
  const auto files = plan_with({{"id", "nic"},
                                {"layer", "net"},
                                {"kind", "error"},
                                {"params", {{"code", "ncclRemoteError"}}},
                                {"target", {{"ranks", {0}}, {"ops", {"isend"}}}},
                                {"trigger", {{"after_calls", 2}}}});
  auto [s, r] = run_pair(
      options_for(files),
      [](Endpoint& ep) {
        char buf[64] = {};
        void* req = nullptr;
        CHILD_CHECK(ep.plugin->isend(ep.comm, buf, 64, 0, nullptr, nullptr, &req) == ncclSuccess,
                    "first isend");
        const ncclResult_t second = ep.plugin->isend(ep.comm, buf, 64, 0, nullptr, nullptr, &req);
        CHILD_CHECK(second == ncclRemoteError, "second isend returned %d", static_cast<int>(second));
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

TEST(NetFaultError, TestReturnsTheAskedNumericCode) {
  const auto files = plan_with({{"id", "nic"},
                                {"layer", "net"},
                                {"kind", "error"},
                                {"params", {{"code", 5}}},
                                {"target", {{"ranks", {1}}, {"ops", {"test"}}}}});
  auto [s, r] = run_pair(
      options_for(files),
      [](Endpoint& ep) {
        timed_sends(ep, 1, 1000);
        ep.recv_value();
        return 0;
      },
      [](Endpoint& ep) {
        std::vector<char> buf(1000);
        ncclResult_t res;
        void* req = post_recv(*ep.plugin, ep.comm, buf.data(), buf.size(), 0, &res);
        int done = 0, got = 0;
        const ncclResult_t tr = wait_request(*ep.plugin, req, &done, &got, 10s);
        ep.send_value(1);
        CHILD_CHECK(tr == ncclInvalidUsage, "test returned %d", static_cast<int>(tr));
        return 0;
      });
  EXPECT_EQ(s, 0);
  EXPECT_EQ(r, 0);
}

TEST(NetFaultNicDown, RequestsFailWithRemoteErrorAfterTheIbRetryBudget) {
  // NCCL_IB_TIMEOUT=14: 4.096 us x 2^14 = 67.1 ms per try, 8 tries (NCCL_IB_RETRY_CNT=7): 536.9 ms.
  const auto files = plan_with({{"id", "port"},
                                {"layer", "net"},
                                {"kind", "nic_down"},
                                {"target", {{"ranks", {1}}, {"direction", "recv"}}},
                                {"trigger", {{"after_calls", 2}}}});
  PairOptions options = options_for(files);
  for (auto* env : {&options.sender_env, &options.receiver_env}) {
    (*env)["NCCL_IB_TIMEOUT"] = "14";
    (*env)["NCCL_IB_RETRY_CNT"] = "7";
  }
  auto [s, r] = run_pair(
      options,
      [](Endpoint& ep) {
        timed_sends(ep, 2, 4096);
        ep.recv_value();
        return 0;
      },
      [](Endpoint& ep) {
        std::vector<char> buf(4096);
        ncclResult_t res;
        int done = 0, got = 0;
        void* first = post_recv(*ep.plugin, ep.comm, buf.data(), buf.size(), 0, &res);
        CHILD_CHECK(first && wait_request(*ep.plugin, first, &done, &got, 10s) == ncclSuccess && done,
                    "the first receive, before the NIC went down");
        const double t0 = now_ms();
        void* second = post_recv(*ep.plugin, ep.comm, buf.data(), buf.size(), 0, &res);
        done = 0;
        const ncclResult_t tr = wait_request(*ep.plugin, second, &done, &got, 10s);
        const double waited = now_ms() - t0;
        ep.send_value(1);
        CHILD_CHECK(tr == ncclRemoteError && !done, "test returned %d (done %d)", static_cast<int>(tr), done);
        // Never early; late only by scheduling.
        CHILD_CHECK(waited >= 536.0 && waited < 536.9 + 1500.0, "failed after %.1f ms", waited);
        return 0;
      });
  EXPECT_EQ(s, 0);
  EXPECT_EQ(r, 0);
  const auto fired = injections(files.events);
  ASSERT_EQ(fired.size(), 1u);
  EXPECT_NEAR(fired[0].value("retry_budget_ms", 0.0), 536.87, 0.01);
  EXPECT_EQ(fired[0].value("code", 0), 6);
}

TEST(NetFaultConnectFail, ConnectAndAcceptReturnTheAskedCode) {
  for (const char* op : {"connect", "accept"}) {
    const auto files = plan_with({{"id", "down"},
                                  {"layer", "net"},
                                  {"kind", "connect_fail"},
                                  {"params", {{"code", "ncclRemoteError"}}},
                                  {"target", {{"ops", {op}}}}});
    const int code =
        run_child({{"NCCLFI_PLAN", files.plan}, {"NCCLFI_EVENTS", files.events}, {"NCCLFI_RANK", "0"}}, [op] {
          void* ctx = nullptr;
          auto plugin = load_and_init(shim_path(), &ctx);
          char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
          void* lc = nullptr;
          CHILD_CHECK(plugin->listen(ctx, 0, handle, &lc) == ncclSuccess, "listen");
          void* comm = nullptr;
          const ncclResult_t result = std::strcmp(op, "connect") == 0 ? plugin->connect(ctx, 0, handle, &comm)
                                                                      : plugin->accept(lc, &comm);
          CHILD_CHECK(result == ncclRemoteError, "%s returned %d", op, static_cast<int>(result));
          CHILD_CHECK(comm == nullptr, "a comm came back");
          return 0;
        });
    EXPECT_EQ(code, 0) << op;
    EXPECT_EQ(injections(files.events).size(), 1u) << op;
  }
}

TEST(NetFaultStall, ConnectionMakesNoProgressForTheWindow) {
  const auto files = plan_with({{"id", "flap"},
                                {"layer", "net"},
                                {"kind", "stall"},
                                {"params", {{"ms", 300}}},
                                {"target", {{"ranks", {1}}, {"direction", "recv"}}},
                                {"trigger", {{"after_calls", 2}}}});
  auto [s, r] = run_pair(
      options_for(files),
      [](Endpoint& ep) {
        timed_sends(ep, 4, 4096);
        ep.recv_value();
        return 0;
      },
      [](Endpoint& ep) {
        std::vector<char> buf(4096);
        std::vector<double> ms;
        for (int i = 0; i < 4; ++i) {
          ncclResult_t res;
          const double t0 = now_ms();
          void* req = post_recv(*ep.plugin, ep.comm, buf.data(), buf.size(), 0, &res);
          int done = 0, got = 0;
          CHILD_CHECK(req && wait_request(*ep.plugin, req, &done, &got, 10s) == ncclSuccess && done, "recv");
          ms.push_back(now_ms() - t0);
        }
        std::fprintf(stderr, "stall: %.2f %.2f %.2f %.2f ms\n", ms[0], ms[1], ms[2], ms[3]);
        CHILD_CHECK(ms[1] >= 299.0 && ms[1] <= 400.0, "stalled request took %.2f ms", ms[1]);
        CHILD_CHECK(ms[3] < 200.0, "still stalled after the window: %.2f ms", ms[3]);
        ep.send_value(1);
        return 0;
      });
  EXPECT_EQ(s, 0);
  EXPECT_EQ(r, 0);
}

TEST(NetInert, NoPlanMeansNoEventsAndNoOutput) {
  const std::string events = write_temp_file("unused", "") + ".events";
  PairOptions options;
  options.sender_env = {{"NCCLFI_EVENTS", events}};
  options.receiver_env = options.sender_env;
  options.output_prefix = events + ".";
  auto [s, r] = run_pair(
      options,
      [](Endpoint& ep) {
        auto ms = timed_sends(ep, 3, 5000);
        return 0;
      },
      [](Endpoint& ep) { return receive_all(ep, 3, 5000); });
  EXPECT_EQ(s, 0) << read_file(events + ".sender.log");
  EXPECT_EQ(r, 0) << read_file(events + ".receiver.log");
  EXPECT_EQ(access(events.c_str(), F_OK), -1) << "the shim wrote events without a plan";
  EXPECT_EQ(read_file(events + ".sender.log"), "");
  EXPECT_EQ(read_file(events + ".receiver.log"), "");
}

TEST(NetWrapFaults, FaultsApplyOnTopOfAnInnerPlugin) {
  const auto files = plan_with({{"id", "flip"},
                                {"layer", "net"},
                                {"kind", "corrupt"},
                                {"params", {{"bits", 5}}},
                                {"target", {{"ranks", {1}}}},
                                {"trigger", {{"after_calls", 1}}}});
  PairOptions options = options_for(files);
  for (Env* env : {&options.sender_env, &options.receiver_env}) (*env)["NCCLFI_NET_INNER"] = inner_path(8);
  auto [s, r] = run_pair(
      options,
      [](Endpoint& ep) {
        timed_sends(ep, 1, 4096);
        ep.recv_value();
        return 0;
      },
      [](Endpoint& ep) {
        const auto want = pattern(4096);
        std::vector<char> buf(4096);
        ncclResult_t res;
        void* req = post_recv(*ep.plugin, ep.comm, buf.data(), buf.size(), 0, &res);
        int done = 0, got = 0;
        CHILD_CHECK(req && wait_request(*ep.plugin, req, &done, &got, 10s) == ncclSuccess && done, "recv");
        const int flipped = bits_differing(want, buf);
        ep.send_value(1);
        CHILD_CHECK(flipped == 5, "%d bits flipped through the wrapped plugin", flipped);
        return 0;
      });
  EXPECT_EQ(s, 0);
  EXPECT_EQ(r, 0);
  EXPECT_EQ(injections(files.events).size(), 1u);
}

}  // namespace
}  // namespace ncclfi::plugin_test
