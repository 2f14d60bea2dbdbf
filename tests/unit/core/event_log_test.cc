// The event log: whole JSON lines with the common fields, and line integrity under concurrent writers
// from several processes and threads, with lines longer than a page.
#include <unistd.h>

#include <map>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "ncclfi/event_log.h"
#include "test_support.h"

namespace ncclfi {
namespace {

using nlohmann::json;

TEST(EventLog, DisabledWithoutAPath) {
  EventLog none;
  EXPECT_FALSE(none.enabled());
  EXPECT_FALSE(none.write("start"));
  EventLog empty("", "test");
  EXPECT_FALSE(empty.enabled());
  EXPECT_FALSE(empty.write(ev::kStart));
}

TEST(EventLog, ALineCarriesTheCommonFields) {
  test::TempDir dir;
  std::string path = dir.file("events.jsonl");
  int64_t wall_before = Clock::wall_ns();
  int64_t mono_before = Clock::mono_ns();
  {
    EventLog log(path, "workload", 2);
    ASSERT_TRUE(log.enabled());
    EXPECT_EQ(log.rank(), 2);
    EXPECT_TRUE(log.write(ev::kStart, {{"world_size", 4}, {"args", "x"}}));
    log.set_rank(3);
    EXPECT_TRUE(log.write(ev::kExit, {{"code", 0}}));
    EXPECT_TRUE(log.write_for_rank(7, ev::kOp, {{"seq", 1}}));
    // A field may not overwrite a common one.
    EXPECT_TRUE(log.write(ev::kAbort, {{"pid", 1}, {"event", "fake"}, {"reason", "r"}}));
  }
  auto lines = test::read_lines(path);
  ASSERT_EQ(lines.size(), 4u);
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  for (const auto& line : lines) {
    json e = json::parse(line);
    for (const char* key : {"ts_ns", "mono_ns", "rank", "pid", "host", "source", "event"}) {
      EXPECT_TRUE(e.contains(key)) << key << " in " << line;
    }
    EXPECT_EQ(e["pid"], static_cast<int>(::getpid()));
    EXPECT_EQ(e["host"], host);
    EXPECT_EQ(e["source"], "workload");
    EXPECT_GE(e["ts_ns"].get<int64_t>(), wall_before);
    EXPECT_GE(e["mono_ns"].get<int64_t>(), mono_before);
    EXPECT_LE(e["mono_ns"].get<int64_t>(), Clock::mono_ns());
  }
  json start = json::parse(lines[0]);
  EXPECT_EQ(start["event"], "start");
  EXPECT_EQ(start["rank"], 2);
  EXPECT_EQ(start["world_size"], 4);
  EXPECT_EQ(json::parse(lines[1])["rank"], 3);
  EXPECT_EQ(json::parse(lines[2])["rank"], 7);
  json abort = json::parse(lines[3]);
  EXPECT_EQ(abort["event"], "abort");
  EXPECT_EQ(abort["pid"], static_cast<int>(::getpid()));
  EXPECT_EQ(abort["reason"], "r");
}

// An event logged after the fact (the harness's kill) keeps the time it happened, on both clocks.
TEST(EventLog, AnExplicitTimeStampsTheLine) {
  test::TempDir dir;
  std::string path = dir.file("events.jsonl");
  {
    EventLog log(path, "harness");
    EXPECT_TRUE(log.write_for_rank(3, ev::kInject, {{"ts_ns", 1}}, EventTime{1234, 56}));
  }
  auto lines = test::read_lines(path);
  ASSERT_EQ(lines.size(), 1u);
  json e = json::parse(lines[0]);
  EXPECT_EQ(e["ts_ns"], 1234);
  EXPECT_EQ(e["mono_ns"], 56);
  EXPECT_EQ(e["rank"], 3);
}

TEST(EventLog, AppendsToAnExistingFileAndSurvivesAMove) {
  test::TempDir dir;
  std::string path = dir.file("events.jsonl");
  test::write_text(path, "{\"earlier\":true}\n");
  EventLog first(path, "a");
  EventLog moved(std::move(first));
  EXPECT_FALSE(first.enabled());  // NOLINT(bugprone-use-after-move): the moved-from state is the point
  EXPECT_TRUE(moved.write("x"));
  EventLog assigned;
  assigned = std::move(moved);
  EXPECT_TRUE(assigned.write("y"));
  auto lines = test::read_lines(path);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "{\"earlier\":true}");
  EXPECT_EQ(json::parse(lines[2])["event"], "y");
}

TEST(EventLog, InvalidUtf8IsReplacedNotThrown) {
  test::TempDir dir;
  EventLog log(dir.file("e.jsonl"), "t");
  EXPECT_TRUE(log.write("bad", {{"text", std::string("\xff\xfe ok")}}));
  EXPECT_NO_THROW(json::parse(test::read_lines(dir.file("e.jsonl")).at(0)));
}

// Payload length of line `seq`: mostly short, every 7th longer than a page (up to ~13 KiB).
size_t payload_length(int seq) {
  return seq % 7 == 0 ? 4097 + static_cast<size_t>(seq * 37) % 9000 : static_cast<size_t>(seq % 300);
}

TEST(EventLogConcurrency, LinesFromProcessesAndThreadsNeverInterleave) {
  test::TempDir dir;
  std::string path = dir.file("events.jsonl");
  constexpr int kProcesses = 4;
  constexpr int kThreads = 3;
  constexpr int kLines = 1500;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    children.push_back(test::spawn([&, p] {
      EventLog log(path, "writer", p);
      std::vector<std::thread> threads;
      std::atomic<int> failures{0};
      for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
          for (int seq = 0; seq < kLines; ++seq) {
            std::string payload(payload_length(seq), static_cast<char>('a' + (seq + t) % 26));
            if (!log.write(ev::kOp, {{"thread", t}, {"seq", seq}, {"payload", payload}})) failures++;
          }
        });
      }
      for (auto& th : threads) th.join();
      return failures.load() == 0 ? 0 : 1;
    }));
  }
  for (pid_t child : children) EXPECT_EQ(test::wait_exit(child), 0);

  std::map<std::pair<int, int>, std::set<int>> seen;  // (pid, thread) -> seqs
  std::set<int> ranks;
  size_t long_lines = 0;
  auto lines = test::read_lines(path);
  ASSERT_EQ(lines.size(), static_cast<size_t>(kProcesses * kThreads * kLines));
  for (const auto& line : lines) {
    json e;
    ASSERT_NO_THROW(e = json::parse(line)) << line.substr(0, 200);
    int seq = e.at("seq").get<int>();
    int thread = e.at("thread").get<int>();
    const std::string payload = e.at("payload").get<std::string>();
    ASSERT_EQ(payload.size(), payload_length(seq));
    ASSERT_EQ(payload, std::string(payload.size(), static_cast<char>('a' + (seq + thread) % 26)));
    auto& seqs_of_writer = seen[std::make_pair(e.at("pid").get<int>(), thread)];
    ASSERT_TRUE(seqs_of_writer.insert(seq).second) << "duplicate line";
    ranks.insert(e.at("rank").get<int>());
    if (line.size() > 4096) ++long_lines;
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(kProcesses * kThreads));
  for (const auto& [who, seqs] : seen) EXPECT_EQ(seqs.size(), static_cast<size_t>(kLines));
  EXPECT_EQ(ranks.size(), static_cast<size_t>(kProcesses));
  EXPECT_GT(long_lines, static_cast<size_t>(kProcesses * kThreads * kLines / 8));
}

}  // namespace
}  // namespace ncclfi
