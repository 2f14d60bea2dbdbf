// Injection records the ranks cannot forge or erase: the ledger pairs the events file's `inject` lines
// with the injection channel's authenticated records, and whatever stays unpaired keeps the verdict off
// pass. Also the channel's socket end to end, and an events file cut under the harness.
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "injection_ledger.h"
#include "injection_receiver.h"
#include "judge.h"
#include "ncclfi/injection_channel.h"
#include "observe.h"
#include "output_tailer.h"

namespace ncclfi::harness {
namespace {

// An inject line as an injector writes it, with its channel seq.
std::string inject_line(int pid, const std::string& source, uint64_t seq, int64_t ts_s = 1) {
  return nlohmann::json{{"event", "inject"}, {"ts_ns", 1700000000000000000 + ts_s * 1'000'000'000},
                        {"mono_ns", 5},      {"rank", 0},
                        {"pid", pid},        {"host", "h"},
                        {"source", source},  {"fault_id", "f1"},
                        {"kind", "drop"},    {"layer", "net"},
                        {"record_seq", seq}, {"attempt", 0}}
      .dump();
}

size_t count(const History& h, const std::string& event) {
  size_t n = 0;
  for (const auto& e : h.events) n += e.event == event ? 1u : 0u;
  return n;
}

// The contract errors left, one a line: "source rank: problem (count) line".
std::string problems(const History& h) {
  std::string all;
  for (const auto& e : h.contract_errors)
    all += e.source + " " + std::to_string(e.rank) + ": " + e.problem + " (" + std::to_string(e.count) +
           ") " + e.line + "\n";
  return all;
}

TEST(RobustInjections, RecordAndLineInEitherOrderPairUp) {
  History h;
  h.world_size = 1;
  InjectionLedger ledger(h, 0);
  ledger.authentic(inject_line(10, "net", 1), 1);
  EXPECT_TRUE(observe_event_line(inject_line(10, "net", 1), h, 0, &ledger));
  EXPECT_TRUE(observe_event_line(inject_line(10, "net", 2), h, 0, &ledger));  // its record comes later
  ledger.authentic(inject_line(10, "net", 2), 2);
  ledger.settle();
  EXPECT_TRUE(h.contract_errors.empty()) << problems(h);
  EXPECT_EQ(count(h, "inject"), 2u);  // the records, once each
}

TEST(RobustInjections, LineWithoutRecordIsForgedAndCountsAsNoInjection) {
  History h;
  h.world_size = 1;
  h.armed_faults = {"f1"};
  InjectionLedger ledger(h, 0);
  EXPECT_TRUE(observe_event_line(inject_line(10, "net", 1), h, 0, &ledger));
  EXPECT_TRUE(observe_event_line(inject_line(10, "harness", 0), h, 0, &ledger));  // no seq at all
  ledger.settle();
  ASSERT_EQ(h.contract_errors.size(), 1u) << problems(h);
  EXPECT_NE(problems(h).find(" 0: forged injection record"), std::string::npos) << problems(h);
  EXPECT_EQ(h.contract_errors[0].count, 2);
  EXPECT_EQ(count(h, "inject"), 0u);
  EXPECT_EQ(count(h, "inject_unverified"), 2u);  // what the rank said stays on the timeline
  const Judgement j = judge(h, nlohmann::json{{"outcome", "clean"}});
  EXPECT_NE(j.verdict, Answer::kPass);
  bool unknown_events = false;
  for (const auto& c : j.checks) {
    unknown_events = unknown_events || (c.field == "events" && c.answer == Answer::kUnknown &&
                                        c.reason.find("forged injection record") != std::string::npos);
  }
  EXPECT_TRUE(unknown_events);
}

TEST(RobustInjections, CopiedLineIsForgedEvenWithARealRecord) {
  History h;
  h.world_size = 1;
  InjectionLedger ledger(h, 0);
  ledger.authentic(inject_line(10, "net", 1), 1);
  EXPECT_TRUE(observe_event_line(inject_line(10, "net", 1), h, 0, &ledger));
  EXPECT_TRUE(observe_event_line(inject_line(10, "net", 1), h, 0, &ledger));
  ledger.settle();
  ASSERT_EQ(h.contract_errors.size(), 1u) << problems(h);
  EXPECT_NE(problems(h).find("forged injection record"), std::string::npos) << problems(h);
  EXPECT_EQ(h.contract_errors[0].count, 1);
  EXPECT_EQ(count(h, "inject"), 1u);
}

TEST(RobustInjections, RecordWithoutLineWasErasedFromTheFile) {
  History h;
  h.world_size = 1;
  InjectionLedger ledger(h, 0);
  ledger.authentic(inject_line(10, "preload", 1), 1);
  ledger.settle();
  ASSERT_EQ(h.contract_errors.size(), 1u) << problems(h);
  EXPECT_NE(problems(h).find("preload -1: an injection the injection channel recorded is missing"),
            std::string::npos)
      << problems(h);
  EXPECT_EQ(count(h, "inject"), 1u);  // the channel's record is the injection
}

TEST(RobustInjections, RecordThatIsNoInjectOrStatesAnotherSeqIsRejected) {
  History h;
  h.world_size = 1;
  InjectionLedger ledger(h, 0);
  ledger.authentic(inject_line(10, "net", 2), 1);
  ledger.authentic("not json", 1);
  ledger.authentic(R"({"event":"done","record_seq":1})", 1);
  ledger.authentic(R"({"event":"inject","record_seq":1,"pid":"x"})", 1);
  ledger.settle();
  ASSERT_EQ(h.contract_errors.size(), 1u) << problems(h);
  EXPECT_NE(problems(h).find("failed authentication (4)"), std::string::npos) << problems(h);
  EXPECT_EQ(count(h, "inject"), 0u);
}

// A datagram through the harness's socket: only the one made with the attempt's key is a record.
TEST(RobustInjections, ReceiverTakesOnlyDatagramsMadeWithItsKey) {
  cli::InjectionReceiver receiver;
  const auto env = receiver.env();
  const std::string path = env.at(kInjectSocketVar);
  const std::string key = env.at(kInjectKeyVar);
  EXPECT_EQ(std::filesystem::status(std::filesystem::path(path).parent_path()).permissions() &
                std::filesystem::perms::all,
            std::filesystem::perms::owner_all);
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(path.size(), sizeof(addr.sun_path));
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  ASSERT_EQ(::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)), 0);
  for (const std::string& d : {encode_injection_datagram(key, 1, inject_line(10, "net", 1)),
                               encode_injection_datagram("guessed", 2, inject_line(10, "net", 2))}) {
    ASSERT_EQ(::send(fd, d.data(), d.size(), 0), static_cast<ssize_t>(d.size()));
  }
  ::close(fd);
  History h;
  h.world_size = 1;
  InjectionLedger ledger(h, 0);
  receiver.drain({[&](const InjectionDatagram& d) { ledger.authentic(d.record, d.seq); },
                  [&](size_t n) { ledger.rejected(n); }});
  EXPECT_TRUE(observe_event_line(inject_line(10, "net", 1), h, 0, &ledger));
  ledger.settle();
  EXPECT_EQ(count(h, "inject"), 1u);
  ASSERT_EQ(h.contract_errors.size(), 1u) << problems(h);
  EXPECT_NE(problems(h).find("failed authentication (1)"), std::string::npos) << problems(h);
}

TEST(RobustInjections, ReceiverRemovesItsDirectory) {
  std::string dir;
  {
    cli::InjectionReceiver receiver;
    dir = std::filesystem::path(receiver.env().at(kInjectSocketVar)).parent_path().string();
    EXPECT_TRUE(std::filesystem::exists(dir));
  }
  EXPECT_FALSE(std::filesystem::exists(dir));
}

// A harness killed by SIGKILL leaves its directory: the next one of the same user removes it.
TEST(RobustInjections, ReceiverRemovesWhatAKilledHarnessLeft) {
  const auto tmp = std::filesystem::temp_directory_path() / ("ncclfi-tmp-" + std::to_string(::getpid()));
  std::filesystem::create_directories(tmp);
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);  // its pid now names no process
  const auto stale = tmp / ("ncclfi-inject-" + std::to_string(child) + "-abcdef");
  const auto alive = tmp / ("ncclfi-inject-" + std::to_string(::getpid()) + "-abcdef");
  std::filesystem::create_directories(stale);
  std::filesystem::create_directories(alive);
  std::ofstream(stale / "socket") << "";
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old != nullptr ? old : "";
  ::setenv("TMPDIR", tmp.c_str(), 1);
  {
    cli::InjectionReceiver receiver;
    EXPECT_FALSE(std::filesystem::exists(stale));
    EXPECT_TRUE(std::filesystem::exists(alive));  // its harness (this test) is alive
  }
  if (old != nullptr) {
    ::setenv("TMPDIR", saved.c_str(), 1);
  } else {
    ::unsetenv("TMPDIR");
  }
  std::filesystem::remove_all(tmp);
}

TEST(RobustInjections, TailerNoticesAFileCutOrReplacedBehindIt) {
  const auto dir = std::filesystem::temp_directory_path() / ("ncclfi-tailer-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "events.jsonl").string();
  std::ofstream(path) << "one\ntwo\n";
  cli::OutputTailer tailer(path);
  EXPECT_EQ(tailer.read_lines().size(), 2u);
  EXPECT_TRUE(tailer.tampered().empty());
  std::filesystem::resize_file(path, 0);
  EXPECT_TRUE(tailer.read_lines().empty());
  EXPECT_NE(tailer.tampered().find("truncated"), std::string::npos) << tailer.tampered();

  const std::string other = (dir / "other").string();
  std::ofstream(other) << "three\n";
  cli::OutputTailer replaced(other);
  EXPECT_EQ(replaced.read_lines().size(), 1u);
  std::ofstream(dir / "new") << "three\nfour\n";
  std::filesystem::rename(dir / "new", other);
  replaced.read_lines();
  EXPECT_NE(replaced.tampered().find("replaced"), std::string::npos) << replaced.tampered();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ncclfi::harness
