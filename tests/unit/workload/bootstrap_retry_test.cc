// ncclfi-cpu-ring's rendezvous retries its connect to rank 0 as NCCL's bootstrap does (bootstrap_retry.h):
// the same lines, the same sleeps, the same count before it gives up, from NCCL 2.28.9's misc/socket.cc.
#include "bootstrap_retry.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace ncclfi::cpu_ring {
namespace {

Rendezvous::ConnectFailure failure(int err, int attempts, bool from_connect = true) {
  return {"127.0.0.1<29500>", err, from_connect, attempts};
}

TEST(BootstrapRetry, RetriesWithNcclsLinesAndSleepsThenGivesUpAfterTheRetryCount) {
  const SocketRetrySettings settings;  // NCCL's defaults: 34 retries, 100 ms
  const auto first = socket_retry_step(failure(ECONNREFUSED, 1), settings);
  EXPECT_FALSE(first.give_up());
  EXPECT_EQ(first.warn_line, 0);
  EXPECT_EQ(first.sleep_ms, 100);
  EXPECT_EQ(
      first.text,
      "socketStartConnect: connect to 127.0.0.1<29500> returned Connection refused, retrying (1/34) after "
      "sleep for 100 msec");
  const auto last_retry = socket_retry_step(failure(EHOSTUNREACH, 34, false), settings);
  EXPECT_FALSE(last_retry.give_up());
  EXPECT_EQ(last_retry.sleep_ms, 3400);
  EXPECT_EQ(
      last_retry.text,
      "socketPollConnect: connect to 127.0.0.1<29500> returned No route to host, retrying (34/34) after "
      "sleep for 3400 msec");
  const auto gives_up = socket_retry_step(failure(ETIMEDOUT, 35), settings);
  EXPECT_TRUE(gives_up.give_up());
  EXPECT_EQ(gives_up.warn_line, 582);  // NCCL 2.28.9's misc/socket.cc
  EXPECT_EQ(
      gives_up.text,
      "socketStartConnect: connect to 127.0.0.1<29500> returned Connection timed out, exceeded error retry "
      "count after 35 attempts");
}

TEST(BootstrapRetry, AnErrorNcclDoesNotRetryFailsAtOnce) {
  const auto step = socket_retry_step(failure(ENETUNREACH, 1), SocketRetrySettings{});
  EXPECT_TRUE(step.give_up());
  EXPECT_EQ(step.warn_line, 596);
  EXPECT_EQ(step.text, "socketStartConnect: connect to 127.0.0.1<29500> failed : Network is unreachable");
}

TEST(BootstrapRetry, NcclsTwoSettingsAreRead) {
  ::setenv("NCCL_SOCKET_RETRY_CNT", "3", 1);
  ::setenv("NCCL_SOCKET_RETRY_SLEEP_MSEC", "20", 1);
  const auto settings = SocketRetrySettings::from_environment();
  ::unsetenv("NCCL_SOCKET_RETRY_CNT");
  ::unsetenv("NCCL_SOCKET_RETRY_SLEEP_MSEC");
  EXPECT_EQ(settings.retry_count, 3);
  EXPECT_EQ(settings.sleep_ms, 20);
  EXPECT_TRUE(socket_retry_step(failure(ECONNREFUSED, 4), settings).give_up());
  EXPECT_EQ(socket_retry_step(failure(ECONNREFUSED, 2), settings).sleep_ms, 40);
}

}  // namespace
}  // namespace ncclfi::cpu_ring
