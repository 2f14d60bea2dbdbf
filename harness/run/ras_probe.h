// The client of NCCL's RAS port: asks the running job's NCCL for its text status report and records
// what it names (missing and lagging ranks) in the history.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "history.h"

namespace ncclfi::harness {

struct RasProbeOptions {
  std::string host = "localhost";  // from NCCL_RAS_ADDR=host:port when set (see ras_address_from_env)
  int port = 28028;
  double timeout_s = 5.0;  // whole exchange; also sent to the server as "TIMEOUT <s>"
  bool verbose = true;     // "VERBOSE STATUS" instead of "STATUS"
};

// host:port from NCCL_RAS_ADDR in `env_value` (empty: defaults). Bad values keep the defaults.
RasProbeOptions ras_address_from_env(const char* env_value);

struct RasReport {
  bool ok = false;                    // connected and read a report
  std::string error;                  // why not, when !ok
  std::string text;                   // the report as sent by the server
  std::vector<int> missing_ranks;     // ranks listed as missing / unresponsive / dead
  std::vector<int> lagging_ranks;     // ranks behind in operation counts (MISMATCH)
  std::vector<std::string> problems;  // the INCOMPLETE / MISMATCH / DEAD / ERROR / TIMEOUT lines
};

// Connects, sends "CLIENT PROTOCOL 2", "TIMEOUT <s>", then "[VERBOSE ]STATUS", and reads until the
// server closes or the timeout passes. Blocking, bounded by options.timeout_s; never throws.
RasReport probe_ras(const RasProbeOptions& options);

// Extracts missing/lagging ranks and problem lines from a report text (pure; used by probe_ras).
void parse_ras_report(RasReport& report);

// Records a probe in the history: a HistoryEvent{source "ras", event "ras_report", fields: text,
// missing, lagging}; and, when the report names missing or lagging ranks or problems, a `ras`
// Detection (rank -1, evidence listing them) at `ts_ns`.
void record_ras_probe(History& history, const RasReport& report, int64_t ts_ns, int attempt);

}  // namespace ncclfi::harness
