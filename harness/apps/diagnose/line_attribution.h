// Which rank and host printed a line of a job's logs, when, and which other end it names: read from the
// file's name, the launchers' prefixes (torchrun's `[default3]:`, PyTorch's `[rank3]:`, Open MPI's
// `[1,3]<stderr>:`, srun --label's `3: `), NCCL's `host:pid:tid [dev]` prefix, syslog's host and the
// time stamps of glog, Python logging, ISO 8601 and syslog. Used by `ncclfi diagnose` (diagnosis.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ncclfi::diagnose {

// A wall-clock time without its year (glog and syslog print none): comparable within a year, shown as
// "MM-DD HH:MM:SS.mmm".
struct LogTime {
  int64_t key_ns = 0;  // ordering key: month, day, time of day
  bool operator<(const LogTime& o) const { return key_ns < o.key_ns; }
};
std::string format_time(const LogTime& t);

struct LineOrigin {
  int rank = -1;                  // from a launcher's or PyTorch's prefix; -1: the line does not say
  std::string host;               // from NCCL's prefix or syslog's host field; "": the line does not say
  std::optional<LogTime> time{};  // from the line's own time stamp
  std::string process;            // NCCL's prefix: "host:pid", the process that printed the line
  // NCCL_DEBUG=INFO's init lines name the printing process's rank in a communicator ("comm 0x... rank 3
  // nRanks 8 ...", "ncclCommInitRank... comm 0x... rank 3 nranks 8 ..."); in the largest communicator of a
  // process (the world's) that is its rank, and every line of that process is that rank's, even in one log
  // where all ranks' lines are mixed. -1: not such a line.
  int communicator_rank = -1;
  int communicator_size = 0;
};

// Reads the prefixes and the time stamp of one line.
LineOrigin attribute_line(std::string_view text);
// The time stamp of `text` (glog `E1202 18:35:14.055222`, ISO 8601 `2026-12-02T10:00:00.5`, syslog
// `Dec  2 10:00:00`), searched near the start of the line after launcher prefixes.
std::optional<LogTime> parse_time(std::string_view text);

// The rank a file's name gives (rank-3.log, rank3.txt, rank_3, rank.3, job-r3.out, output-HOST-rank-3.log),
// or -1.
int rank_from_file_name(std::string_view name);
// The host of an agent's `output-HOST-rank-R.log`, or "".
std::string host_from_file_name(std::string_view name);
// The host a file's place names: an agent's `output-HOST-rank-R.log`, or any file in `nodes/HOST/` (an
// operator's evidence of one node: its kernel log, ibstat, perfquery, lspci, nvidia-smi); "".
std::string host_from_path(const std::string& path);

// Which GPU or HCA of its node a line of an operator's tool output is about: the tools list a node's
// devices one block after another, and each block's first line says which. `next` reads the lines of one
// file in order and answers the local index of the block the line belongs to (the GPU's place in PCI bus
// order, as nvidia-smi and CUDA number a node's GPUs, or N of the HCA mlx5_N, the HCA beside GPU N), or
// -1 before any block (and in files that list no devices, such as the kernel log).
class DeviceBlocks {
 public:
  int next(std::string_view line);

 private:
  int current_ = -1;
  int gpus_seen_ = 0;
};

// The address of the other end an NCCL line names (`remote peer 10.0.0.3<port>`, `from peer X<port>`,
// `connect to X<port>`, `Call to recv from X<port>`, `declaring peer X<port>`), without the port; "".
std::string peer_address(std::string_view text);
// The printer's own address, from NCCL INFO `Bootstrap : Using eth0:10.0.0.1<0>`, `OOB eth0:10.0.0.1<0>`
// or `NET/Socket : Using [0]eth0:10.0.0.1<0>`; "".
std::string own_address(std::string_view text);

}  // namespace ncclfi::diagnose
