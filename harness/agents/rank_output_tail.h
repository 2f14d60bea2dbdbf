// The ranks' output in a job with node agents (docs/multihost.md): `ncclfi agent --exec` copies each
// rank's stdout and stderr unchanged to the launcher and, as lines, into a node-local file of the
// agent's spool directory; the node's agent follows those files, keeps each rank's last lines, streams
// new ones to the harness under a byte budget and sends each rank's final tail when it ends; the
// harness stores what arrives. Every stage is bounded, whatever a rank prints. This file is the one
// place of those limits, and of the pieces each stage is built from.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ncclfi::cli {

// A line of output kept anywhere (spool file, stream, tail) is cut to this many bytes, the cut marked
// with how much was left out. NCCL's warnings and PyTorch's errors are a few hundred bytes; a line
// longer than this is a dump, whose head says what it is.
inline constexpr size_t kOutputLineBytes = 1024;
// The lines of a rank's final tail (the agent's ring per rank): the last error and what led to it.
inline constexpr size_t kTailLines = 20;
// What `agent --exec` writes of one rank's output to the node's /tmp: past it, lines are counted, not
// written, and only the last kTailLines are written when the rank ends. A flooding rank must not fill a
// node's /tmp, which other jobs use.
inline constexpr uint64_t kSpoolOutputCapBytes = uint64_t{4} << 20;
// What one node's agent streams to the harness: a token bucket over all its ranks' lines. Lines past
// it are counted as dropped (they stay in the tail): a flood of output must not crowd out the events,
// which share the connection, or make the harness's poll loop fall behind its deadlines.
inline constexpr double kStreamBytesPerSecond = 64 << 10;
inline constexpr double kStreamBurstBytes = 256 << 10;
// What the harness writes of one rank's streamed lines per attempt into the run directory; past it, the
// lines are counted (the final tail still arrives).
inline constexpr uint64_t kHarnessOutputCapBytes = uint64_t{1} << 20;

// Where `agent --exec` writes rank `rank`'s output in the spool directory: SPOOL/output-rank-R.log.
std::string spool_output_path(const std::string& spool_dir, int rank);
// The rank of such a file name ("output-rank-3.log" -> 3), or -1.
int spool_output_rank(const std::string& file_name);

// Cuts one stream of bytes into lines of at most kOutputLineBytes (the head of a longer line, then
// " [ncclfi: N bytes cut]"), holding no more than that, however long a line runs.
class LineCutter {
 public:
  using Sink = std::function<void(std::string)>;
  void feed(const char* data, size_t n, const Sink& line);
  // The last line when it lacks its newline.
  void finish(const Sink& line);
  uint64_t cut_lines() const { return cut_lines_; }

 private:
  void emit(const Sink& line);
  std::string partial_;
  uint64_t cut_bytes_ = 0;  // of the current line, past what partial_ holds
  uint64_t cut_lines_ = 0;
};

// The last `capacity` lines, oldest first, and how many lines went through.
class TailRing {
 public:
  explicit TailRing(size_t capacity = kTailLines) : capacity_(capacity) {}
  void push(std::string line);  // cut to kOutputLineBytes
  std::vector<std::string> lines() const { return {lines_.begin(), lines_.end()}; }
  uint64_t total() const { return total_; }

 private:
  size_t capacity_;
  std::deque<std::string> lines_;
  uint64_t total_ = 0;
};

// A token bucket: `bytes_per_s`, at most `burst` saved up. Times are a monotonic clock's ns.
class ByteBudget {
 public:
  ByteBudget(double bytes_per_s, double burst, int64_t now_ns)
      : rate_(bytes_per_s), burst_(burst), tokens_(burst), last_ns_(now_ns) {}
  // True (and the bytes are spent) when `bytes` fit now.
  bool take(size_t bytes, int64_t now_ns);

 private:
  double rate_, burst_, tokens_;
  int64_t last_ns_;
};

// `agent --exec`'s copy of one rank's output (both streams, line by line) in its spool file: written
// while under `cap` bytes; past it counted, and the last kTailLines kept to be written at close() after
// a line saying how much was skipped.
class SpoolOutputFile {
 public:
  explicit SpoolOutputFile(const std::string& path, uint64_t cap = kSpoolOutputCapBytes);
  SpoolOutputFile(const SpoolOutputFile&) = delete;
  ~SpoolOutputFile();
  // Bytes the rank wrote on `stream` (0 stdout, 1 stderr).
  void feed(int stream, const char* data, size_t n);
  void close();  // the streams' last partial lines, the skipped count and the kept tail
  uint64_t lines() const { return lines_; }
  uint64_t skipped_lines() const { return skipped_lines_; }
  uint64_t skipped_bytes() const { return skipped_bytes_; }
  uint64_t cut_lines() const { return cutters_[0].cut_lines() + cutters_[1].cut_lines(); }

 private:
  void take(std::string line);
  void write_line(const std::string& line);
  int fd_ = -1;
  uint64_t cap_;
  uint64_t written_ = 0;
  LineCutter cutters_[2];
  TailRing overflow_;  // the last lines past the cap
  uint64_t lines_ = 0, skipped_lines_ = 0, skipped_bytes_ = 0;
};

// One rank's output as an agent or the harness knows it.
struct RankTail {
  TailRing ring;
  uint64_t dropped = 0;        // lines not streamed: over the node's budget
  uint64_t skipped_lines = 0;  // not written to the spool: over kSpoolOutputCapBytes (from rank_exit)
  uint64_t skipped_bytes = 0;
  uint64_t cut_lines = 0;
};

// The agent's `tail` message for `rank`: its last lines and counts, oldest lines left out (counted in
// "omitted") until the line fits `max_bytes` (kMaxAgentLineBytes): escaping can grow a line sixfold.
nlohmann::json tail_message(int rank, const RankTail& tail, size_t max_bytes);

// The agent's half: follows the spool's output files, streams new lines under one ByteBudget and sends
// a rank's final tail when asked (its rank_exit was seen) and for every rank at the end.
class NodeOutputStreamer {
 public:
  using Send = std::function<bool(const nlohmann::json&)>;
  NodeOutputStreamer(std::string spool_dir, int64_t now_ns, double bytes_per_s = kStreamBytesPerSecond,
                     double burst = kStreamBurstBytes);
  NodeOutputStreamer(const NodeOutputStreamer&) = delete;
  ~NodeOutputStreamer();
  // New lines of every rank's file (new files found too); `final`: everything left.
  void poll(const Send& send, int64_t now_ns, bool final = false);
  // A rank_exit event line from the spool's events: its counts, then the rank's final tail.
  void rank_ended(const nlohmann::json& rank_exit, const Send& send, int64_t now_ns);
  // Every rank's final tail not yet sent since its last line.
  void finish(const Send& send, int64_t now_ns);
  const std::map<int, RankTail>& tails() const { return tails_; }

 private:
  struct File;
  void read_file(int rank, bool final, const Send& send, int64_t now_ns);
  void send_tail(int rank, const Send& send);
  std::string spool_dir_;
  ByteBudget budget_;
  std::map<int, std::unique_ptr<File>> files_;
  std::map<int, RankTail> tails_;
  std::map<int, bool> tail_sent_;  // rank -> its final tail went out after its last line
};

// The harness's half: each rank's streamed lines in LOG_DIR/output-HOST-rank-R.log (up to
// kHarnessOutputCapBytes, then counted) and each rank's final tail.
class HarnessOutputStore {
 public:
  // `log_dir`: the attempt's (attempt-N/); `world_size`: ranks outside [0, world_size) are ignored.
  HarnessOutputStore(std::string log_dir, int world_size)
      : log_dir_(std::move(log_dir)), world_size_(world_size) {}
  // An `output` message ({rank, line}) from the agent on `host`.
  void line(const std::string& host, const nlohmann::json& message);
  // A `tail` message from the agent on `host`.
  void tail(const std::string& host, const nlohmann::json& message);

  struct Rank {
    std::string host;
    std::string file;                // the file's name in the log directory ("" when nothing was written)
    std::vector<std::string> lines;  // the final tail, or the last lines streamed while none arrived
    bool tail_arrived = false;
    uint64_t lines_total = 0, dropped = 0, skipped_lines = 0, skipped_bytes = 0, cut_lines = 0;
    uint64_t streamed = 0, not_stored = 0;  // lines that arrived; those over kHarnessOutputCapBytes
    uint64_t stored_bytes = 0;
  };
  const std::map<int, Rank>& ranks() const { return ranks_; }

 private:
  Rank* rank_of(const std::string& host, const nlohmann::json& message);
  std::string log_dir_;
  int world_size_;
  std::map<int, Rank> ranks_;
};

}  // namespace ncclfi::cli
