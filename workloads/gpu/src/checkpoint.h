// Progress checkpoints of ncclfi-workload: which step to resume from and the digest of every verified
// result so far, so a job restarted after a crash can be judged by its final digest.
//
// One text file per rank, DIR/rank<R>.ckpt, replaced atomically (write, fsync, rename):
//
//   ncclfi-workload-checkpoint 1
//   rank 0
//   world_size 2
//   plan 8c1f0e4d2a7b9e31          <- RunPlan::fingerprint: a checkpoint of another plan is refused
//   total_steps 500
//   entry 100 9d3f61a0c2b4e857 0   <- next step, digest of steps [0, next), wrong elements in them
//   entry 200 1b2c3d4e5f607182 0   <- the newest entry last; two are kept (see below)
//   crc 5a0c1d2e                   <- FNV-1a 32 of every byte before this line
//
// Two entries are kept because ranks save independently: when a job dies, one rank may have saved the
// checkpoint at step S while another died before saving it. A rank cannot reach the save at S + K
// before every rank has finished step S + K - 1, which comes after their save at S, so the newest
// entries of the ranks differ by one interval at most and every rank holds the oldest newest entry.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ncclfi::workload {

// splitmix64's finaliser: the mixing step of every digest here.
uint64_t digest_mix(uint64_t value);

// Folds one verified step into the running digest. A run that skipped, repeated or got a step wrong
// ends with another digest than the fault-free run of the same plan.
uint64_t digest_step(uint64_t digest, uint64_t seq, int op, int dtype, uint64_t count, uint64_t wrong);

struct CheckpointEntry {
  uint64_t next_step = 0;
  uint64_t digest = 0;
  uint64_t wrong_total = 0;
  bool operator==(const CheckpointEntry&) const = default;
};

struct Checkpoint {
  int rank = 0;
  int world_size = 1;
  uint64_t plan = 0;
  uint64_t total_steps = 0;
  std::vector<CheckpointEntry> entries;  // oldest first, at most kMaxEntries
  static constexpr size_t kMaxEntries = 2;

  // Appends `entry`, dropping the oldest past kMaxEntries.
  void push(const CheckpointEntry& entry);
  // The entry whose next_step is `step`, if kept.
  std::optional<CheckpointEntry> entry_at(uint64_t step) const;
  // The newest entry's next_step, or 0.
  uint64_t latest_step() const;
};

class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::string format_checkpoint(const Checkpoint& checkpoint);
// Throws CheckpointError naming the line and what was wrong (bad header, unknown key, bad number,
// missing field, entries out of order, bad or missing crc: a torn or edited file).
Checkpoint parse_checkpoint(std::string_view text);

std::string checkpoint_path(const std::string& dir, int rank);
// Writes atomically (temporary file, fsync, rename). Creates `dir`. Throws CheckpointError.
void save_checkpoint_file(const std::string& dir, const Checkpoint& checkpoint);
// nullopt when there is no file; throws CheckpointError when it cannot be read or parsed.
std::optional<Checkpoint> load_checkpoint_file(const std::string& dir, int rank);

// Where a job should resume given every rank's newest step (the smallest; every rank keeps that entry).
uint64_t common_resume_step(const std::vector<uint64_t>& latest_steps);

}  // namespace ncclfi::workload
