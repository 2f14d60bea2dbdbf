// The NCCL logger's prefix, release by release (workloads/cpu_ring/nccl_log_format.h), against NCCL's
// src/debug.cc: no timestamp before 2.26.2; from it, WARN lines stamped "[%F %T] " unless
// NCCL_DEBUG_TIMESTAMP_LEVELS / NCCL_DEBUG_TIMESTAMP_FORMAT say otherwise.
#include "nccl_log_format.h"

#include <regex>

#include <gtest/gtest.h>

namespace ncclfi::cpu_ring {
namespace {

const net::NcclVersion k2_21_5{2, 21, 5};
const net::NcclVersion k2_26_2{2, 26, 2};
const net::NcclVersion k2_28_9{2, 28, 9};

timespec at(time_t seconds, long nanoseconds) {
  timespec t{};
  t.tv_sec = seconds;
  t.tv_nsec = nanoseconds;
  return t;
}

TEST(NcclLogFormat, NoTimestampBefore2_26_2) {
  const NcclLogFormat format(k2_21_5, nullptr, nullptr);
  EXPECT_FALSE(format.stamps_warn());
  EXPECT_EQ(format.timestamp(true, at(1796270761, 0)), "");
  // NCCL_DEBUG_TIMESTAMP_* did not exist then: set, they change nothing.
  EXPECT_EQ(NcclLogFormat(k2_21_5, "ALL", "%T").timestamp(true, at(1796270761, 0)), "");
}

TEST(NcclLogFormat, From2_26_2AWarnIsStampedByDefaultAndAnInfoIsNot) {
  const NcclLogFormat format(k2_26_2, nullptr, nullptr);
  EXPECT_TRUE(format.stamps_warn());
  EXPECT_FALSE(format.stamps_info());
  EXPECT_TRUE(std::regex_match(format.timestamp(true, at(1796270761, 0)),
                               std::regex(R"(\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] )")));
  EXPECT_EQ(format.timestamp(false, at(1796270761, 0)), "");
}

TEST(NcclLogFormat, LevelsAndFormatComeFromNcclsVariables) {
  const NcclLogFormat info_only(k2_28_9, "info", "%T.%3f_");
  EXPECT_FALSE(info_only.stamps_warn());
  EXPECT_TRUE(info_only.stamps_info());
  // %3f: three digits of the subseconds; '_' is a space.
  EXPECT_TRUE(std::regex_match(info_only.timestamp(false, at(1796270761, 123456789)),
                               std::regex(R"(\d\d:\d\d:\d\d\.123 )")));
  const NcclLogFormat all(k2_28_9, "WARN,INFO", "");
  EXPECT_TRUE(all.stamps_warn() && all.stamps_info());
  EXPECT_EQ(all.timestamp(true, at(1796270761, 0)), "");  // an empty format turns stamps off
}

TEST(NcclLogFormat, TheHostIsCutAtItsFirstDot) {
  EXPECT_EQ(nccl_log_host().find('.'), std::string::npos);
  EXPECT_FALSE(nccl_log_host().empty());
}

}  // namespace
}  // namespace ncclfi::cpu_ring
