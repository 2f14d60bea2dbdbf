#include "suite_records.h"

#include <fcntl.h>
#include <unistd.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "reports.h"

namespace ncclfi::cli {

namespace {

// A spooled line: the record as verdict.json has it, and whether its history was trimmed (verdict.json
// does not say: a run's own file always has the whole history).
std::string spool_line(const harness::RunRecord& record) {
  const nlohmann::json line = {{"trimmed", record.history_trimmed},
                               {"record", harness::verdict_json(record)}};
  return line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

harness::RunRecord unreadable_record(size_t line, const std::string& why) {
  harness::RunRecord r;
  r.scenario = "(the suite's record of run " + std::to_string(line) + ")";
  r.harness_error = "the suite's spooled record of this run could not be read back: " + why;
  return r;
}

}  // namespace

SuiteRecords::SuiteRecords(std::string spool_path, size_t suite_runs)
    : spool_path_(std::move(spool_path)), suite_runs_(suite_runs) {
  if (suite_runs <= harness::kSuiteRunsWithFullHistory) return;
  // A new file of the harness's own: never one planted there, never through a link.
  const int fd = ::open(spool_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd >= 0) spool_ = ::fdopen(fd, "w");
  if (fd >= 0 && spool_ == nullptr) ::close(fd);
}

SuiteRecords::~SuiteRecords() {
  if (spool_ != nullptr) {
    std::fclose(spool_);
    ::unlink(spool_path_.c_str());
  }
}

bool SuiteRecords::spool(const harness::RunRecord& record) {
  if (spool_ == nullptr || !writable_) return false;
  const std::string line = spool_line(record);
  if (std::fwrite(line.data(), 1, line.size(), spool_) == line.size() && std::fflush(spool_) == 0) {
    spool_bytes_ += static_cast<long>(line.size());
    ++spooled_;
    return true;
  }
  // Part of the line may be in the file: cut it back to the last whole line, so later lines stay whole.
  // Where that fails, the spool takes nothing more (later records stay in memory); the lines it has are
  // still read back, and a part line after them never is.
  std::clearerr(spool_);
  writable_ =
      ::ftruncate(::fileno(spool_), spool_bytes_) == 0 && std::fseek(spool_, spool_bytes_, SEEK_SET) == 0;
  return false;
}

void SuiteRecords::add(harness::RunRecord record) {
  const size_t place = added_++;
  if (!record.skipped && !harness::suite_keeps_full_history(suite_runs_, record))
    harness::trim_history(record);
  if (spool(record)) return;
  held_.emplace_back(place, std::move(record));
}

std::vector<harness::RunRecord> SuiteRecords::take_all() {
  std::vector<harness::RunRecord> all;
  all.reserve(added_);
  std::ifstream in;
  if (spooled_ > 0) {
    std::fflush(spool_);
    in.open(spool_path_);
  }
  size_t held = 0;
  for (size_t place = 0; place < added_; ++place) {
    if (held < held_.size() && held_[held].first == place) {
      all.push_back(std::move(held_[held++].second));
      continue;
    }
    std::string line;
    if (!std::getline(in, line)) {
      all.push_back(unreadable_record(place + 1, "the spool ends before it"));
      continue;
    }
    try {
      const nlohmann::json doc = nlohmann::json::parse(line);
      harness::RunRecord r = harness::run_record_from_json(doc.at("record"));
      r.history_trimmed = doc.at("trimmed").get<bool>();
      all.push_back(std::move(r));
    } catch (const std::exception& e) {
      all.push_back(unreadable_record(place + 1, e.what()));
    }
  }
  held_.clear();
  return all;
}

}  // namespace ncclfi::cli
