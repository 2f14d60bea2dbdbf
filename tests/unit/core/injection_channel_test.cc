// The injection channel's datagrams: only the key's holder can make one the harness accepts.
#include "ncclfi/injection_channel.h"

#include <gtest/gtest.h>

namespace ncclfi {
namespace {

constexpr const char* kKey = "0123456789abcdef0123456789abcdef";
constexpr const char* kRecord = R"({"event":"inject","fault_id":"f1","pid":7,"record_seq":3,"source":"net"})";

TEST(InjectionChannel, DatagramRoundTripsUnderItsKey) {
  const auto d = decode_injection_datagram(kKey, encode_injection_datagram(kKey, 3, kRecord));
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->seq, 3u);
  EXPECT_EQ(d->record, kRecord);
}

TEST(InjectionChannel, AnotherKeyOrAnyChangeIsRejected) {
  const std::string good = encode_injection_datagram(kKey, 3, kRecord);
  EXPECT_FALSE(decode_injection_datagram("another key", good).has_value());
  std::string record_changed = good;
  record_changed[record_changed.find("f1")] = 'g';
  EXPECT_FALSE(decode_injection_datagram(kKey, record_changed).has_value());
  EXPECT_FALSE(decode_injection_datagram(kKey, "4" + good.substr(1)).has_value());  // the seq is signed
  EXPECT_FALSE(decode_injection_datagram(kKey, std::string("3 ") + std::string(64, '0') + " " + kRecord));
}

TEST(InjectionChannel, MalformedDatagramsAreRejected) {
  for (const char* bad : {"", " ", "3", "3 ", "x y z", "-1 aa {}", "99999999999999999999999 aa {}"})
    EXPECT_FALSE(decode_injection_datagram(kKey, bad).has_value()) << bad;
}

TEST(InjectionChannel, MacCoversSeqAndRecordApart) {
  // "1" + "\n2..." must not sign the same as "12" + "..."; the newline keeps the two fields apart.
  EXPECT_NE(injection_mac(kKey, 1, "2{}"), injection_mac(kKey, 12, "{}"));
  EXPECT_EQ(injection_mac(kKey, 1, "{}").size(), 64u);
}

}  // namespace
}  // namespace ncclfi
