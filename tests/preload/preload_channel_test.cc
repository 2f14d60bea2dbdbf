// The injection channel from inside a rank: the preload takes its variables as it loads, so neither the
// process's code nor its children see them, and each injection reaches the harness's socket as a
// datagram only the key's holder could make, paired with its events-file line by record_seq.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include "ncclfi/injection_channel.h"
#include "preload_fixture.h"

namespace ncclfi::test {
namespace {

constexpr const char* kKey = "5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e";

// The harness's end, as a test: a datagram socket in the test's folder.
class ChannelTest : public PreloadTest {
 protected:
  void SetUp() override {
    PreloadTest::SetUp();
    socket_path_ = path("s");
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    ASSERT_GE(fd_, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    ASSERT_LT(socket_path_.size(), sizeof(addr.sun_path));
    std::memcpy(addr.sun_path, socket_path_.c_str(), socket_path_.size() + 1);
    ASSERT_EQ(::bind(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)), 0);
  }
  void TearDown() override {
    if (fd_ >= 0) ::close(fd_);
    PreloadTest::TearDown();
  }
  std::map<std::string, std::string> channel_env() const {
    return {{kInjectSocketVar, socket_path_}, {kInjectKeyVar, kKey}};
  }
  std::vector<std::string> datagrams() const {
    std::vector<std::string> out;
    char buf[65536];
    ssize_t n;
    while ((n = ::recv(fd_, buf, sizeof(buf), 0)) > 0) out.emplace_back(buf, static_cast<size_t>(n));
    return out;
  }

  std::string socket_path_;
  int fd_ = -1;
};

TEST_F(ChannelTest, EachInjectionIsAnAuthenticatedRecordPairedWithItsLine) {
  write_plan(json::array({fault("err", "error", {{"code", "ncclRemoteError"}},
                                json{{"ranks", {0}}, {"ops", {"allreduce"}}}, {{"after_calls", 2}})}));
  auto r = run({"ops", "allreduce", "3"}, channel_env());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto inj = events("inject");
  ASSERT_EQ(inj.size(), 1u);
  EXPECT_EQ(inj[0]["seq"], 2);  // the op's number stays the preload's
  EXPECT_EQ(inj[0][kRecordSeqField], 1);
  const auto got = datagrams();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_FALSE(decode_injection_datagram("another key", got[0]).has_value());
  const auto d = decode_injection_datagram(kKey, got[0]);
  ASSERT_TRUE(d.has_value()) << got[0];
  EXPECT_EQ(d->seq, 1u);
  const json record = json::parse(d->record);
  EXPECT_EQ(record["event"], "inject");
  EXPECT_EQ(record["fault_id"], "err");
  EXPECT_EQ(record["pid"], inj[0]["pid"]);
  EXPECT_EQ(record["source"], inj[0]["source"]);
  EXPECT_EQ(record[kRecordSeqField], 1);
  EXPECT_EQ(record["ts_ns"], inj[0]["ts_ns"]);
}

// A shell under the preload: its own environment (what `env` and a child see) and the environment block
// /proc shows no longer hold the key.
TEST_F(ChannelTest, TheProcessAndItsChildrenNeverSeeTheVariables) {
  auto env = channel_env();
  env["LD_PRELOAD"] = NCCLFI_TEST_PRELOAD;
  const auto r = run_process({"/bin/sh", "-c",
                              "env; echo ---; tr '\\0' '\\n' < /proc/$$/environ; echo ---; "
                              "sh -c 'echo child=${NCCLFI_INJECT_KEY:-unset}'"},
                             env, 20);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find(kKey), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(socket_path_), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("child=unset"), std::string::npos) << r.out;
  // Without the preload nothing takes them: the same shell prints the key (the test can fail).
  env.erase("LD_PRELOAD");
  const auto plain = run_process({"/bin/sh", "-c", "env"}, env, 20);
  EXPECT_NE(plain.out.find(kKey), std::string::npos) << plain.out;
}

}  // namespace
}  // namespace ncclfi::test
