// The prefix NCCL's logger (src/debug.cc) writes before each line, release by release, so that what
// ncclfi-cpu-ring and the net shim print through it reads as the NCCL release it stands for:
//   - a WARN line starts with an empty line ("\n" before the prefix);
//   - from NCCL 2.26.2, the levels NCCL_DEBUG_TIMESTAMP_LEVELS names (WARN by default; a comma list of
//     VERSION, WARN, INFO, ABORT, TRACE or ALL) get a timestamp in NCCL_DEBUG_TIMESTAMP_FORMAT (strftime,
//     "[%F %T] " by default; %Nf for N digits of subseconds; '_' stands for a space);
//   - then host:pid:tid [dev], the host cut at its first dot.
#pragma once

#include <ctime>
#include <string>

#include "ncclfi_net/ib_completion_lines.h"

namespace ncclfi::cpu_ring {

class NcclLogFormat {
 public:
  // The format of `version`, with the two settings as the environment gives them (nullptr: unset).
  NcclLogFormat(net::NcclVersion version, const char* timestamp_levels, const char* timestamp_format);
  // From NCCLFI_NCCL_VERSION ("2.28.7" or an ncclGetVersion code; the newest release ncclfi knows when
  // unset) and NCCL's own two variables.
  static NcclLogFormat from_environment();

  bool stamps_warn() const { return stamp_warn_; }
  bool stamps_info() const { return stamp_info_; }
  // The timestamp for a line of that level written at `now` ("" where the level gets none).
  std::string timestamp(bool warn, const timespec& now) const;

 private:
  bool stamp_warn_ = false;
  bool stamp_info_ = false;
  std::string format_;  // strftime format, '_' already a space, %Nf still in it
};

// The NCCL release the lines stand for: NCCLFI_NCCL_VERSION ("2.28.7" or an ncclGetVersion code), else the
// newest release ncclfi knows.
net::NcclVersion nccl_version_from_environment();

// NCCL's host name for its lines: gethostname() up to the first dot.
std::string nccl_log_host();

}  // namespace ncclfi::cpu_ring
