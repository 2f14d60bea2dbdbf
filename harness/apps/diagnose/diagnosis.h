// `ncclfi diagnose`: names the culprit of a failed NCCL job from its logs alone. Every line is classified
// against the signature catalogue (LogClassifier::builtin()); each matched line is attributed to a rank
// and a host (line_attribution.h) and points at its printer, at the other end it names, or at no one,
// as the catalogue's `printed_by` says. The culprit is the host or rank the lines point at most; the
// site is the vote of the matched lines' sites, weighted toward lines by or about the culprit. All of it
// is heuristic: there is no ground truth in a log (docs/diagnose.md).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "line_attribution.h"
#include "log_reader.h"
#include "reference_pace.h"

namespace ncclfi::diagnose {

// Whom a matched line points at.
enum class Pointer {
  kNone,       // every rank prints it (a timeout, a teardown): no one in particular
  kPrinter,    // the rank or host that printed it (a link down in its kernel log, a CUDA fault)
  kPeer,       // the other end it names (socket closed by remote peer X)
  kEitherEnd,  // either end of a connection (an IB completion error): half each
  kNamed,      // a launcher's line naming the failed rank (torchrun's local_rank, srun's task)
};
// What the catalogue says of line `id` (its printed_by), with the launchers' lines as kNamed.
Pointer pointer_of(const std::string& id);

// One classified line.
struct Evidence {
  std::string file;  // as shown
  size_t line = 0;   // 1-based
  std::string text;  // the line, clipped
  std::string pattern, role, label, site;
  int rank = -1;
  std::string host;
  std::optional<LogTime> time{};
  bool time_inferred = false;  // the line has no stamp: the last stamp before it in its file
  Pointer pointer = Pointer::kNone;
  std::string peer;    // the address it names
  std::string target;  // the unit it points at ("host node2", "rank 1"), "" = none
  double weight = 0;   // its weight toward `target`
  int attempt = -1;    // the launch it was printed in (attempt-N), -1 unknown
  int device = -1;     // a node's tool output: the GPU or HCA of the node it is about (DeviceBlocks)
};

struct Candidate {
  std::string unit;  // a host, or "rank N" where the host is unknown
  std::vector<int> ranks;
  double score = 0;
  std::vector<std::string> reasons;
};

struct Diagnosis {
  bool failure = false;  // some detection-role line was found
  size_t files = 0, lines = 0;
  std::vector<std::string> skipped;
  bool timestamps = false;  // order by time stamps (else by file position)
  std::optional<Evidence> first_failure;
  std::vector<Candidate> candidates;  // best first; candidates[0] is the culprit
  std::vector<int> culprit_ranks;
  std::string culprit_host;             // "" where no host is known, or candidates of several hosts tie
  std::vector<std::string> tied_units;  // the units tied at the top score, when more than one
  std::vector<int> lost_peer_ranks;     // ranks that failed only because a peer did
  std::vector<int> hang_candidates;     // ranks that stopped printing while others failed
  std::vector<int> stuck_in_call;  // ranks whose watchdog found them inside the NCCL call the others left
  std::vector<int> late_watchdog;  // ranks whose watchdog fired long after its timeout: stopped processes
  int stopped_at = -1;    // the rank where the collective stopped: the ring's earliest, the one left behind
  std::string stop_site;  // what the way it stopped says: congestion (a send not taken), nic (data lost)
  int alive_but_silent = -1;   // a silent rank whose process still answered: hung on its host
  bool one_rank_job = false;   // the job had one rank (a workload's header says so): no peer to blame
  int failed_on_its_own = -1;  // the one failed rank that lost no peer while others did
  // Ranks that could not connect to the bootstrap while the others connected and waited for them.
  std::vector<int> kept_out_of_bootstrap;
  std::map<std::string, double> site_votes;
  std::string site, symptom, symptom_why;
  std::vector<std::string> tied_sites;          // the sites tied at the top vote, when more than one
  std::string site_why;                         // where a rule beyond the votes decided the site, why
  std::vector<std::string> link_test_findings;  // what a per-link test's table shows (link_test.h)
  double confidence = 0;
  std::vector<std::string> what_would_decide;
  std::vector<Evidence> evidence;  // every classified line (at most kMaxEvidence), in order
  size_t evidence_dropped = 0;
  std::map<std::string, std::string> address_hosts;  // 10.0.0.1 -> node1
  std::map<int, std::string> rank_hosts;
  std::map<std::string, int> address_ranks;  // an address no rank announced, taken as a quiet rank's
  size_t quoted_lines_dropped = 0;           // rankless lines that repeat a rank's own line word for word
  // No failure, but several times slower than the run's fault-free references: symptom "slow with no
  // error" (reference_pace.h).
  std::optional<SlowJob> slow;
};

constexpr size_t kMaxEvidence = 2000;

// Reads and classifies every file of `inputs` and decides. Never throws on content.
Diagnosis diagnose(const InputSet& inputs);

// The report: text for a terminal (every quoted line through terminal_safe) and JSON.
std::string diagnosis_text(const Diagnosis& d);
nlohmann::json diagnosis_json(const Diagnosis& d);

}  // namespace ncclfi::diagnose
