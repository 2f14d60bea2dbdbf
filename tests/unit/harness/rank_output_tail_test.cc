// The pieces that carry a rank's output from its node to the harness (rank_output_tail.h): the ring
// keeps the last lines in order, the budget drops lines (counted, still in the ring), the cutter and the
// spool file stay bounded, the tail message fits the wire, the harness's store is capped.
#include "rank_output_tail.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "agent_protocol.h"

namespace ncclfi::cli {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  TempDir()
      : path(fs::temp_directory_path() /
             ("ncclfi-tail-" + std::to_string(getpid()) + "-" + std::to_string(++n))) {
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  fs::path path;
  static inline int n = 0;
};

std::vector<std::string> file_lines(const fs::path& p) {
  std::ifstream in(p);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

TEST(TailRing, KeepsTheLastLinesInOrderAndCountsAll) {
  TailRing ring(5);
  for (int i = 0; i < 100; ++i) ring.push("line " + std::to_string(i));
  EXPECT_EQ(ring.lines(), (std::vector<std::string>{"line 95", "line 96", "line 97", "line 98", "line 99"}));
  EXPECT_EQ(ring.total(), 100u);
  TailRing fewer(5);
  fewer.push("a");
  fewer.push("b");
  EXPECT_EQ(fewer.lines(), (std::vector<std::string>{"a", "b"}));
}

TEST(TailRing, CutsALongLineAndSaysHowMuch) {
  TailRing ring;
  ring.push(std::string(100000, 'x'));
  const auto lines = ring.lines();
  ASSERT_EQ(lines.size(), 1u);
  const std::string& kept = lines[0];
  EXPECT_LE(kept.size(), kOutputLineBytes);
  EXPECT_EQ(kept.substr(0, 10), std::string(10, 'x'));
  const std::string marker = " bytes cut]";
  EXPECT_EQ(kept.substr(kept.size() - marker.size()), marker);
  // the marker names the bytes left out: all but the head kept
  const auto at = kept.find(" [ncclfi: ");
  ASSERT_NE(at, std::string::npos);
  EXPECT_EQ(std::stoul(kept.substr(at + 10)), 100000u - at);
}

TEST(LineCutter, JoinsLinesAcrossReadsAndHoldsAnEndlessLineBounded) {
  LineCutter cutter;
  std::vector<std::string> lines;
  auto sink = [&](std::string l) { lines.push_back(std::move(l)); };
  cutter.feed("hel", 3, sink);
  cutter.feed("lo\nwor", 6, sink);
  cutter.feed("ld\n", 3, sink);
  EXPECT_EQ(lines, (std::vector<std::string>{"hello", "world"}));
  lines.clear();
  const std::string chunk(1 << 16, 'y');
  for (int i = 0; i < 160; ++i) cutter.feed(chunk.data(), chunk.size(), sink);  // 10 MiB, no newline
  EXPECT_TRUE(lines.empty());
  cutter.finish(sink);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_LE(lines[0].size(), kOutputLineBytes);
  const auto at = lines[0].find(" [ncclfi: ");
  ASSERT_NE(at, std::string::npos);
  EXPECT_EQ(std::stoull(lines[0].substr(at + 10)), 160ull * chunk.size() - at);
  EXPECT_EQ(cutter.cut_lines(), 1u);
}

TEST(ByteBudget, SpendsTheBurstThenRefillsAtItsRate) {
  const int64_t t0 = 1'000'000'000;
  ByteBudget budget(1000, 3000, t0);  // 1000 bytes/s, 3000 saved up
  EXPECT_TRUE(budget.take(2000, t0));
  EXPECT_TRUE(budget.take(1000, t0));
  EXPECT_FALSE(budget.take(1, t0));
  EXPECT_FALSE(budget.take(600, t0 + 500'000'000));  // 500 bytes back after 0.5 s
  EXPECT_TRUE(budget.take(500, t0 + 500'000'000));
  EXPECT_TRUE(budget.take(3000, t0 + 100'000'000'000));  // never more than the burst
  EXPECT_FALSE(budget.take(1, t0 + 100'000'000'000));
}

TEST(SpoolOutputFile, StopsAtItsCapCountsTheRestAndEndsWithTheLastLines) {
  TempDir dir;
  const auto path = dir.path / "out.log";
  uint64_t lines = 0;
  {
    SpoolOutputFile spool(path.string(), 64 << 10);
    std::string batch;
    for (int i = 0; i < 100000; ++i) batch += "out " + std::to_string(i) + "\n";
    spool.feed(0, batch.data(), batch.size());
    spool.feed(1, "err without newline", 19);
    spool.close();
    lines = spool.lines();
    EXPECT_EQ(lines, 100001u);
    EXPECT_GT(spool.skipped_lines(), 90000u);
  }
  EXPECT_LE(fs::file_size(path), (64u << 10) + 512 + kTailLines * (kOutputLineBytes + 1));
  const auto kept = file_lines(path);
  ASSERT_GT(kept.size(), kTailLines + 1);
  // the last lines the rank printed close the file, in order, after the notice of what was skipped
  EXPECT_EQ(kept.back(), "err without newline");
  EXPECT_EQ(kept[kept.size() - 2], "out 99999");
  EXPECT_EQ(kept[kept.size() - kTailLines], "out " + std::to_string(99999 - kTailLines + 2));
  EXPECT_NE(kept[kept.size() - kTailLines - 1].find("were not kept"), std::string::npos);
  EXPECT_EQ(kept.front(), "out 0");
}

TEST(TailMessage, FitsTheWireHoweverTheLinesEscape) {
  RankTail tail;
  for (int i = 0; i < 40; ++i) tail.ring.push(std::string(kOutputLineBytes, '\x01'));  // \u0001: 6 bytes each
  tail.dropped = 7;
  const auto m = tail_message(3, tail, kMaxAgentLineBytes);
  EXPECT_LE(m.dump().size() + 1, kMaxAgentLineBytes);
  EXPECT_GT(m["omitted"].get<size_t>(), 0u);
  EXPECT_EQ(m["lines"].size() + m["omitted"].get<size_t>(), kTailLines);
  EXPECT_EQ(m["dropped"], 7);
  EXPECT_EQ(m["lines_total"], 40);
}

TEST(NodeOutputStreamer, StreamsUnderItsBudgetInOrderAndSendsTheFinalTail) {
  TempDir dir;
  {
    std::ofstream out(spool_output_path(dir.path.string(), 2));
    for (int i = 0; i < 1000; ++i) out << "line " << i << "\n";
  }
  std::ofstream(dir.path / "events.jsonl") << "not an output file\n";
  std::vector<nlohmann::json> sent;
  auto send = [&](const nlohmann::json& m) {
    sent.push_back(m);
    return true;
  };
  const int64_t t0 = 5'000'000'000;
  // room for "line 0".."line 99" and their newlines (10 x 7 + 90 x 8 bytes), never more (no refill)
  NodeOutputStreamer streamer(dir.path.string(), t0, 0, 790);
  streamer.poll(send, t0);
  std::vector<std::string> streamed;
  for (const auto& m : sent) {
    ASSERT_EQ(m["t"], "output");
    EXPECT_EQ(m["rank"], 2);
    streamed.push_back(m["line"]);
  }
  ASSERT_EQ(streamed.size(), 100u);
  for (size_t i = 0; i < streamed.size(); ++i) EXPECT_EQ(streamed[i], "line " + std::to_string(i));
  sent.clear();
  streamer.rank_ended({{"event", "rank_exit"}, {"rank", 2}, {"output_skipped_lines", 5u}}, send, t0);
  ASSERT_EQ(sent.size(), 1u);
  const auto& tail = sent[0];
  EXPECT_EQ(tail["t"], "tail");
  EXPECT_EQ(tail["lines_total"], 1000);
  EXPECT_EQ(tail["dropped"], 900);
  EXPECT_EQ(tail["skipped_lines"], 5);
  ASSERT_EQ(tail["lines"].size(), kTailLines);
  for (size_t i = 0; i < kTailLines; ++i)
    EXPECT_EQ(tail["lines"][i], "line " + std::to_string(1000 - kTailLines + i));
  sent.clear();
  streamer.finish(send, t0);  // nothing new since that tail: not sent again
  EXPECT_TRUE(sent.empty());
}

TEST(HarnessOutputStore, KeepsEachRanksLinesUnderItsCapAndItsTail) {
  TempDir dir;
  HarnessOutputStore store(dir.path.string(), 4);
  const std::string line(1000, 'z');
  const uint64_t n = kHarnessOutputCapBytes / 1000 + 50;
  for (uint64_t i = 0; i < n; ++i) store.line("node/3", {{"rank", 1}, {"line", line}});
  store.line("node3", {{"rank", 4}, {"line", "outside the job"}});
  // until the final tail arrives, the last lines streamed stand for it
  EXPECT_EQ(store.ranks().at(1).lines, std::vector<std::string>(kTailLines, line));
  store.tail("node/3", {{"rank", 1}, {"lines", {"a", "b"}}, {"lines_total", 99}, {"dropped", 3}});
  store.line("node/3", {{"rank", 1}, {"line", "after the tail"}});  // the tail stands
  ASSERT_EQ(store.ranks().size(), 1u);
  const auto& r = store.ranks().at(1);
  EXPECT_EQ(r.host, "node/3");
  EXPECT_EQ(r.file, "output-node_3-rank-1.log");  // a host name cannot name another directory
  EXPECT_LE(fs::file_size(dir.path / r.file), kHarnessOutputCapBytes);
  EXPECT_EQ(r.streamed, n + 1);
  EXPECT_EQ(r.not_stored, n + 1 - kHarnessOutputCapBytes / 1001);
  EXPECT_EQ(r.lines, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(r.lines_total, 99u);
  EXPECT_EQ(r.dropped, 3u);
}

TEST(SpoolOutputPath, NamesOneFilePerRank) {
  EXPECT_EQ(spool_output_rank(fs::path(spool_output_path("/tmp/x", 12)).filename().string()), 12);
  EXPECT_EQ(spool_output_rank("output-rank-.log"), -1);
  EXPECT_EQ(spool_output_rank("output-rank--1.log"), -1);
  EXPECT_EQ(spool_output_rank("events.jsonl"), -1);
}

}  // namespace
}  // namespace ncclfi::cli
