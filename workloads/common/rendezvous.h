// How a workload's ranks find each other without NCCL: the rendezvous every ncclfi workload (cpu-ring and
// ncclfi-workload) uses to exchange NCCL's unique id and to wait for one another.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ncclfi {

// Where this rank sits and how to find its peers: torchrun's names first, then Open MPI, then Slurm.
struct RendezvousInfo {
  int rank = -1;
  int world_size = -1;
  int local_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  std::string launcher;  // "torchrun-env", "openmpi", "slurm" or "" when nothing was found
  // NCCLFI_JOB_KEY: a secret the harness draws per attempt. Every rank proves it knows it when it joins,
  // so a stranger's connection to MASTER_PORT is refused ("" without the harness: the magic only).
  std::string job_key;
};

// Reads RANK/WORLD_SIZE/LOCAL_RANK/MASTER_ADDR/MASTER_PORT, else OMPI_COMM_WORLD_{RANK,SIZE,LOCAL_RANK},
// else SLURM_{PROCID,NTASKS,LOCALID} (+ SLURM_LAUNCH_NODE_IPADDR). Throws std::runtime_error naming the
// missing or malformed variable.
RendezvousInfo rendezvous_from_env();

// A tiny TCP rendezvous on master_addr:master_port: rank 0 serves, the others connect (retrying until
// `timeout`). allgather() exchanges one fixed-size blob per rank; barrier() waits for every rank.
// Every call fails with std::runtime_error on timeout or a dead peer, never hangs past its timeout.
// A rank joins with a hello (magic, rank, a hash of the job key) that rank 0 reads within
// kRendezvousHelloMs; a connection that sends anything else, or nothing, is refused and logged on
// stderr, never fatal. Blobs are at most kMaxRendezvousBlobBytes.
class Rendezvous {
 public:
  // A failed connect to rank 0: `to` ("127.0.0.1<29500>", NCCL's way of writing an address), the errno,
  // whether it came from connect() itself (false: from polling the connection), and the failed attempts
  // so far. Answers how long to wait before the next attempt, or nullopt to give up (the constructor then
  // throws). Without one: 50 ms, until the timeout.
  struct ConnectFailure {
    std::string to;
    int err = 0;
    bool from_connect = true;
    int attempts = 0;
  };
  using RetryPolicy = std::function<std::optional<std::chrono::milliseconds>(const ConnectFailure&)>;

  Rendezvous(const RendezvousInfo& info, std::chrono::milliseconds timeout, RetryPolicy retry = {});
  ~Rendezvous();
  Rendezvous(const Rendezvous&) = delete;
  Rendezvous& operator=(const Rendezvous&) = delete;

  std::vector<std::string> allgather(const std::string& mine);
  void barrier();

  // Fault-tolerant agreement after a peer died (ncclfi-workload --recover shrink). Each surviving rank
  // calls it with the first step it has not completed. Rank 0 waits until every peer has either called
  // it too, closed its connection (a killed process's socket closes) or stayed silent for `wait`; the
  // latter two are the dead ranks. The survivors all learn the same sorted dead list and the smallest
  // step any survivor still needs (the step they resume at). Rank 0 must survive: it hosts the
  // rendezvous (as torchrun's store does), so a survivor that loses rank 0 throws, saying so.
  // `flags`: bits each survivor states; the survivors learn the AND of them (all_flags). `root_payload`:
  // rank 0's own blob (at most kMaxRendezvousBlobBytes), handed to every survivor as `payload`.
  struct Survivors {
    std::vector<int> dead;
    uint64_t resume_step = 0;
    uint64_t all_flags = 0;
    std::string payload;
  };
  Survivors agree_on_survivors(uint64_t next_step, std::chrono::milliseconds wait, uint64_t flags = 0,
                               const std::string& root_payload = "");
  int rank() const { return info_.rank; }
  int world_size() const { return info_.world_size; }

 private:
  RendezvousInfo info_;
  std::chrono::milliseconds timeout_;
  int listen_fd_ = -1;
  std::vector<int> peer_fds_;  // rank 0: one per other rank (index = rank); others: [0] = rank 0
};

}  // namespace ncclfi
