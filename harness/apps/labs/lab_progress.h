// A student's progress in the key directory (KEY_DIR/TICKET/progress.json): the hints used and every
// attempt with its grade. It is what the gradebook counts, so it is signed and bounded:
//
// - Signed: the file carries "mac", the HMAC-SHA256 under the key directory's secret (lab_key_dir.h) of
//   its canonical content, and that content names the ticket it belongs to (lab, student, ticket id).
//   A hand edit, a file copied from another student's ticket, a truncated or deleted file: none verifies,
//   and nothing counts it as a grade.
// - Bounded: at most kMaxAttempts attempts, and never more than kMaxProgressBytes on disk. A file that
//   cannot be trusted (too large, unsigned, wrongly signed, another ticket's) is refused and left as it
//   is, as evidence: nothing here ever replaces it with a fresh progress.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

namespace ncclfi::cli::lab {

// Enough for any honest student: the answers after the 20th are refused (docs/labs.md).
inline constexpr size_t kMaxAttempts = 20;
// What one answer may record (--rank, --detail): with kMaxAttempts, a progress file stays far below
// kMaxProgressBytes.
inline constexpr size_t kMaxAnswerRanks = 64;
inline constexpr size_t kMaxAnswerDetails = 16;
inline constexpr size_t kMaxDetailBytes = 256;  // a detail's name, and its value, each
inline constexpr size_t kMaxProgressBytes = 1 << 20;

// Whose progress a file is: part of what is signed.
struct ProgressOwner {
  std::string lab, student, ticket_id;
};

// A fresh progress for `owner`: no hint used, no attempt (unsigned until written).
nlohmann::json new_progress(const ProgressOwner& owner);

// What reading a progress file found. Only kVerified has a document to count.
enum class ProgressState {
  kVerified,
  kMissing,   // no file: deleted, or a start that never finished
  kTooLarge,  // over kMaxProgressBytes
  kTampered,  // not JSON, no or a wrong signature, another ticket's, or not a progress when signed
};
// The gradebook's word for a state: "ok", "missing", "too-large", "tampered".
const char* state_word(ProgressState state);

struct ProgressRead {
  ProgressState state = ProgressState::kMissing;
  std::string path;     // the file
  std::string problem;  // why it is not verified: "PATH: ..."
  nlohmann::json doc;   // the verified progress (kVerified only)
  bool verified() const { return state == ProgressState::kVerified; }
};

// Reads and verifies `ticket_dir`/progress.json for `owner` under `secret`. Never throws for what the
// file holds, and never changes the file.
ProgressRead read_progress(const std::string& ticket_dir, const ProgressOwner& owner,
                           const std::string& secret);

// The verified progress, or an exception that names the file and why it is refused (for hint and
// answer: they must not build on a progress they cannot trust).
nlohmann::json read_verified_progress(const std::string& ticket_dir, const ProgressOwner& owner,
                                      const std::string& secret);

// Held by hint and answer from reading a ticket's progress to writing it back: two commands at once on
// one ticket would otherwise each add to the same old progress, and the one written last would drop the
// other's attempt (a way round kMaxAttempts, and out of the record). An exclusive flock on
// `ticket_dir`/progress.lock, released when the lock goes out of scope.
class ProgressLock {
 public:
  explicit ProgressLock(const std::string& ticket_dir);
  ~ProgressLock();
  ProgressLock(const ProgressLock&) = delete;
  ProgressLock& operator=(const ProgressLock&) = delete;

 private:
  int fd_ = -1;
};

// Signs `doc` for `owner` and replaces `ticket_dir`/progress.json with it (atomically). Throws, writing
// nothing, when it holds more than kMaxAttempts attempts or would be larger than kMaxProgressBytes.
void write_progress(const std::string& ticket_dir, const ProgressOwner& owner, nlohmann::json doc,
                    const std::string& secret);

}  // namespace ncclfi::cli::lab
