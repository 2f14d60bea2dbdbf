// The IB retry budget: the delay after which a real NIC reports IBV_WC_RETRY_EXC_ERR.
#include "ncclfi/ib_retry_budget.h"

#include <gtest/gtest.h>

using namespace std::chrono;

TEST(IbRetryBudget, NcclDefaultsGiveAboutThirtyFourSeconds) {
  const auto b = ncclfi::ib_retry_budget({});
  ASSERT_TRUE(b.has_value());
  // 4.096 us * 2^20 = 4.294967 s per attempt, 8 attempts.
  EXPECT_EQ(b->count(), 4294967LL * 8);
}

TEST(IbRetryBudget, ExponentAndRetriesScaleIt) {
  EXPECT_EQ(ncclfi::ib_retry_budget({14, 0})->count(), 67108);  // 4.096 us * 16384
  EXPECT_EQ(ncclfi::ib_retry_budget({21, 7})->count(), 8589934LL * 8);
  EXPECT_EQ(ncclfi::ib_retry_budget({14, 99})->count(), 67108 * 8);  // the verbs maximum is 7
}

TEST(IbRetryBudget, ZeroOrHugeExponentMeansNever) {
  EXPECT_FALSE(ncclfi::ib_retry_budget({0, 7}).has_value());
  EXPECT_FALSE(ncclfi::ib_retry_budget({32, 7}).has_value());
}

TEST(IbRetryBudget, ReadsNcclEnvironment) {
  setenv("NCCL_IB_TIMEOUT", "16", 1);
  setenv("NCCL_IB_RETRY_CNT", "3", 1);
  const auto s = ncclfi::ib_retry_settings_from_env();
  EXPECT_EQ(s.timeout_exponent, 16);
  EXPECT_EQ(s.retry_count, 3);
  setenv("NCCL_IB_TIMEOUT", "abc", 1);
  EXPECT_EQ(ncclfi::ib_retry_settings_from_env().timeout_exponent, 20);
  unsetenv("NCCL_IB_TIMEOUT");
  unsetenv("NCCL_IB_RETRY_CNT");
}
