// `ncclfi diagnose`'s decisions: attribution of the classified lines, the culprit, the site, the symptom
// and the confidence. The weights are heuristics, written down in docs/diagnose.md.
#include "diagnosis.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <tuple>

#include <re2/re2.h>

#include "line_regex.h"
#include "link_test.h"
#include "ncclfi/bounded_input.h"
#include "noise.h"
#include "observe.h"
#include "ring_waits.h"
#include "signature_family.h"

namespace ncclfi::diagnose {
namespace {

using harness::LineRegex;

constexpr size_t kMaxQuotedChars = 400;
// Weights toward the unit a line points at.
constexpr double kPrinterEvidenceWeight = 3;  // the host's own kernel or HCA said so
constexpr double kPrinterDetectionWeight = 2;
constexpr double kPeerWeight = 1.5;
constexpr double kEitherEndWeight = 0.5;
// A launcher saw the rank die of a signal that kills (SIGKILL, SIGSEGV, SIGBUS, SIGILL, SIGFPE); an exit
// code or SIGABRT/SIGTERM is most often the teardown after another rank's failure, and points nowhere.
constexpr double kCrashNamedWeight = 2;
constexpr double kHangWeight = 1;
// How late a watchdog fires, past its timeout, before its process counts as stopped (at least).
constexpr double kLateWatchdogS = 0.5;
// A rank held back on its sends for less than this over a whole run is within a ring's own jitter.
constexpr double kHeldBackMinS = 0.05;
// What a line of a rank that only lost a peer counts toward the site, against the culprit's own lines.
constexpr double kLostPeerSiteFactor = 0.25;
// How much more a node's record of its own hardware (its kernel, its tools) weighs on the site.
constexpr double kHardwareRecordSiteFactor = 3;
// A task Slurm still had to terminate at the time limit while the others had ended by themselves: it
// could not even exit. Less than a printer's own error line, which names a cause, not only a state.
constexpr double kStillRunningAtLimitWeight = 1.5;
// The mechanisms that only say time ran out: a job whose detections are all of these hung.
const std::set<std::string> kTimeoutMechanisms = {"torch_watchdog",     "torch_heartbeat",
                                                  "nccl_tests_timeout", "workload_watchdog",
                                                  "launcher_teardown",  "harness_deadline"};

int to_int(const std::string& digits) {
  int value = -1;
  const char* begin = digits.data();
  if (!digits.empty() && digits.front() == '-') ++begin;
  const auto [end, ec] = std::from_chars(begin, digits.data() + digits.size(), value);
  if (ec != std::errc() || end != digits.data() + digits.size()) return 0;
  return begin != digits.data() ? -value : value;
}

std::string clip(const std::string& text) {
  return text.size() <= kMaxQuotedChars ? text : text.substr(0, kMaxQuotedChars) + "...";
}

const harness::SignatureLine* catalogue_line(const std::string& id) {
  static const std::map<std::string, const harness::SignatureLine*> by_id = [] {
    std::map<std::string, const harness::SignatureLine*> m;
    for (const auto& entry : harness::signature_catalogue())
      m.emplace(std::string(entry.line->id), entry.line);
    return m;
  }();
  const auto it = by_id.find(id);
  return it == by_id.end() ? nullptr : it->second;
}

// The mechanisms' own lines say no site; what they point to, for the vote.
std::string fallback_site(const std::string& id) {
  static const std::map<std::string, std::string> sites = {
      {"cuda.gpu_fault", "gpu_fault"},
      {"mpirun.noticed", "dead_rank"},
      {"torch.heartbeat_stuck", "host_hang,gpu_hang"},
      {"torch.heartbeat_terminate", "host_hang,gpu_hang"},
      {"torch.heartbeat_timeout", "host_hang,gpu_hang"},
      {"nccl.remote_error_async", "dead_rank,nic,degraded_link"},
      {"nccl.remote_error", "dead_rank,nic,degraded_link"},
      {"nccl_tests.timeout", "host_hang,gpu_hang,congestion"},
  };
  const auto it = sites.find(id);
  return it == sites.end() ? std::string() : it->second;
}

std::vector<std::string> split_sites(const std::string& sites) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < sites.size()) {
    size_t comma = sites.find(',', start);
    if (comma == std::string::npos) comma = sites.size();
    if (comma > start) out.push_back(sites.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

bool contains(std::string_view text, std::string_view word) {
  return text.find(word) != std::string_view::npos;
}

// Whether `host` occurs in `path` as a whole word (node2 in logs/node2/kern.log, node2-kern.log).
bool names_host(const std::string& path, const std::string& host) {
  auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  for (size_t at = path.find(host); at != std::string::npos; at = path.find(host, at + 1)) {
    const size_t end = at + host.size();
    if ((at == 0 || !alnum(path[at - 1])) && (end == path.size() || !alnum(path[end]))) return true;
  }
  return false;
}

std::string rank_unit(int rank) {
  return "rank " + std::to_string(rank);
}

struct Scores {
  std::map<std::string, double> host_level;  // unit -> score
  std::map<int, double> rank_level;
  std::map<std::string, std::vector<std::string>> reasons;  // unit -> why
};

// One rank's end-of-run waits (ring_waits.h), with the line that printed them.
struct RingWaits {
  double send_s = 0, recv_s = 0;
  Evidence line;
};

struct Analysis {
  Diagnosis& d;
  std::map<int, size_t> rank_lines;       // every rank seen, with its line count
  std::map<int, size_t> rank_detections;  // detection lines per rank
  std::set<std::string> hosts;
  // torchrun's error summary (`host : node2`, then `rank : 3 (local_rank: 1)`): (host, local rank) -> rank.
  std::map<std::pair<std::string, int>, int> torchrun_ranks;
  const Evidence* first_srun_line = nullptr;  // the first `srun: error: ...: task N: ...` line read
  bool step_cancelled = false;                // Slurm cancelled the step (time limit, preemption)
  bool srun_task_exited = false;              // srun saw a task exit by itself (`Exited with exit code`)
  int last_attempt = -1;                      // the newest launch (attempt-N) whose logs were read
  int failed_attempt = -1;    // the newest launch with a failure in its logs (a restart may have run clean)
  std::set<int> lost_a_peer;  // ranks whose lines of that launch say a peer reset or closed a connection
  // The job's size as the job stated it: ncclfi-workload's header ("N ranks"), NCCL's init lines (the
  // largest communicator); 0 when nothing stated it.
  int stated_world_size = 0;
  // A per-link test's rows, each with the line that printed it (link_test.h).
  std::vector<LinkRow> link_rows;
  std::vector<Evidence> link_row_lines;
  // ncclfi-cpu-ring's end-of-run line of where its ring steps waited, per (launch, rank).
  std::map<std::pair<int, int>, RingWaits> ring_waits;
  // Addresses no rank announced, with the ranks whose lines name them.
  std::map<std::string, std::set<int>> unmapped_address_namers;
  // Each address a rank announced as its own (NET/IB's `OOB lo:10.0.0.2<0>`), with the ranks that did:
  // one rank where each GPU has an HCA and an address of its own, several where a node's ranks share one.
  std::map<std::string, std::set<int>> address_announcers;
  // "host:pid" -> (rank, size) of the largest communicator whose init line that process printed.
  std::map<std::string, std::pair<int, int>> process_ranks;

  // Ranks 0..N-1 as far as the logs show them (the highest rank seen, plus one); 0 when none is seen.
  int world_size() const { return rank_lines.empty() ? 0 : rank_lines.rbegin()->first + 1; }
  // A launcher saw a rank die of a signal (srun's `Killed`, mpirun's `exited on signal`).
  bool launcher_saw_a_death() const {
    return std::any_of(d.evidence.begin(), d.evidence.end(), [](const Evidence& e) {
      return e.pointer == Pointer::kNamed && e.site == "dead_rank";
    });
  }
  // Every rank of the job failed: as many ranks as the job had (its stated size, the highest rank seen),
  // and no launcher saw one die. A rank that printed nothing, or whose log is missing, may be the one
  // that died.
  bool every_rank_failed(const std::set<int>& failed) const {
    const int world = std::max(world_size(), stated_world_size);
    return world > 0 && static_cast<int>(failed.size()) >= world && !launcher_saw_a_death();
  }
  std::string unit_of(int rank, const std::string& host) const {
    if (!host.empty()) return host;
    return rank >= 0 ? rank_unit(rank) : std::string();
  }
  std::vector<int> ranks_on(const std::string& host) const {
    std::vector<int> ranks;
    for (const auto& [rank, h] : d.rank_hosts)
      if (h == host) ranks.push_back(rank);
    return ranks;
  }
  // The host an address names: one a rank announced, or a host name itself (gpu4.cluster -> gpu4).
  std::string host_of_address(const std::string& address) const {
    if (const auto it = d.address_hosts.find(address); it != d.address_hosts.end()) return it->second;
    for (const std::string& h : hosts)
      if (address == h || address.rfind(h + ".", 0) == 0) return h;
    return {};
  }
};

// The short host name, as NCCL prints it (up to the first dot).
std::string short_host(const std::string& host) {
  return host.substr(0, host.find('.'));
}

// torchrun's ChildFailedError summary names each failed worker's host, global rank and local rank.
void read_torchrun_summary(const std::string& line, std::string& host, Analysis& a) {
  static const LineRegex host_line(R"(^\s*host\s*: (\S+)\s*$)");
  static const LineRegex global(R"(^\s*rank\s*: (\d+) \(local_rank: \d+\))");
  static const LineRegex local(R"(^\s*rank\s*: \d+ \(local_rank: (\d+)\))");
  std::string value;
  if (line.find("host") != std::string::npos && host_line.search(line, &value)) {
    host = short_host(value);
  } else if (line.find("(local_rank: ") != std::string::npos && global.search(line, &value)) {
    const int rank = to_int(value);
    if (local.search(line, &value)) a.torchrun_ranks[{host, to_int(value)}] = rank;
    if (!host.empty() && !a.d.rank_hosts.count(rank)) a.d.rank_hosts[rank] = host;
  }
}

// NCCL returns ncclRemoteError to the ranks that lost a peer ("remote process exited or there was a network
// error"), and a local code to the rank whose own call failed: ncclSystemError from a system or verbs call
// (ibv_post_send, a socket), ncclUnhandledCudaError from a CUDA call. A local code points at its printer.
void point_local_error_at_printer(const std::string& pattern, const std::string& line, Evidence& e) {
  if (pattern != "nccl.result_name" && pattern != "nccl.result_text") return;
  if (contains(line, "ncclSystemError") || contains(line, "unhandled system error")) {
    e.pointer = Pointer::kPrinter;
    // A call that sets up a connection (connect, accept, listen) or a communicator (ncclCommInitRank...,
    // ncclGetUniqueId: NCCL 2.28 connects only at the first collective, so what fails in them is bootstrap)
    // failed: connection setup, not traffic.
    static const LineRegex setup(
        R"(\b(connect|accept|listen|[Bb]ootstrap|ncclCommInit\w*|ncclGetUniqueId)\b)");
    e.site = setup.search(line) ? "bootstrap" : "nic";
  } else if (contains(line, "ncclUnhandledCudaError") || contains(line, "unhandled cuda error")) {
    e.pointer = Pointer::kPrinter;
    e.site = "gpu_fault,nvlink,pcie";
  } else if (contains(line, "ncclInternalError") || contains(line, "internal error - please report")) {
    // A check inside NCCL or its plugin failed on this rank: its own code, no site of the course's.
    e.pointer = Pointer::kPrinter;
    e.site.clear();
  }
}

// The kernel's and the operator tools' lines (the catalogue's hardware records): each says a part of a
// node is broken.
bool names_broken_hardware(const std::string& id) {
  return harness::is_hardware_record(id);
}

// Every process's rank from NCCL's init lines (line_attribution.h), over all the files before any line is
// read: a process's first init line may be a smaller communicator's, and its first lines come before any.
void learn_process_ranks(const InputSet& inputs, Analysis& a) {
  for (const InputFile& file : inputs.files) {
    std::string text;
    if (!read_regular_file(file.path, kMaxLogFileBytes, text).empty()) continue;
    for (size_t start = 0; start < text.size();) {
      size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      const std::string_view line(text.data() + start, std::min(end - start, harness::kMaxLineBytes));
      start = end + 1;
      if (line.find(" NCCL INFO ") == std::string_view::npos) continue;  // cheap: only init lines count
      const LineOrigin origin = attribute_line(line);
      if (origin.communicator_rank < 0 || origin.process.empty()) continue;
      auto& known = a.process_ranks.try_emplace(origin.process, -1, 0).first->second;
      if (origin.communicator_size > known.second)
        known = {origin.communicator_rank, origin.communicator_size};
      a.stated_world_size = std::max(a.stated_world_size, origin.communicator_size);
    }
  }
}

// ncclfi-workload's header: "# ncclfi-workload: 2 ranks, NCCL 2.28.3, ...".
void read_stated_world_size(std::string_view line, Analysis& a) {
  static const re2::RE2 header(R"(# ncclfi-workload: (\d+) ranks,)");  // after any launcher prefix
  int ranks = 0;
  if (re2::RE2::PartialMatch(line, header, &ranks))
    a.stated_world_size = std::max(a.stated_world_size, ranks);
}

void read_file(const InputFile& file, const harness::LogClassifier& classifier, Analysis& a) {
  Diagnosis& d = a.d;
  std::string text;
  if (const std::string why = read_regular_file(file.path, kMaxLogFileBytes, text); !why.empty()) {
    d.skipped.push_back(file.shown + ": " + why);
    return;
  }
  if (text.substr(0, 4096).find('\0') != std::string::npos) {
    d.skipped.push_back(file.shown + ": binary");
    return;
  }
  ++d.files;
  const std::string name = std::filesystem::path(file.path).filename().string();
  // The file's name, else its folder's (Open MPI's --output-filename writes DIR/1/rank.3/stdout).
  int file_rank = rank_from_file_name(name);
  if (file_rank < 0)
    file_rank = rank_from_file_name(std::filesystem::path(file.path).parent_path().filename().string());
  const std::string file_host = host_from_path(file.path);
  a.last_attempt = std::max(a.last_attempt, file.attempt);
  if (file_rank >= 0) a.rank_lines[file_rank] += 0;  // a rank's log that stays empty: it said nothing
  std::optional<LogTime> last_time;
  DeviceBlocks devices;  // a node's tool output: which of its GPUs or HCAs each line is about
  std::string summary_host;
  size_t line_no = 0;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, std::min(end - start, harness::kMaxLineBytes));
    start = end + 1;
    ++line_no;
    ++d.lines;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const LineOrigin origin = attribute_line(line);
    int rank = origin.rank >= 0 ? origin.rank : file_rank;
    if (const auto it = a.process_ranks.find(origin.process); rank < 0 && it != a.process_ranks.end())
      rank = it->second.first;
    const std::string host = !origin.host.empty() ? origin.host : file_host;
    const int device = file_rank < 0 && !file_host.empty() ? devices.next(line) : -1;
    if (origin.time) {
      last_time = origin.time;
      d.timestamps = true;
    }
    if (rank >= 0) {
      ++a.rank_lines[rank];
      if (!host.empty() && !d.rank_hosts.count(rank)) d.rank_hosts[rank] = host;
    }
    if (!host.empty()) a.hosts.insert(host);
    read_torchrun_summary(line, summary_host, a);
    read_stated_world_size(line, a);
    if (const std::string own = own_address(line); !own.empty()) {
      if (!host.empty()) d.address_hosts[own] = host;
      if (rank >= 0) a.address_announcers[own].insert(rank);
    }
    // Where the line is: the same for a link-test row and a catalogue line.
    const auto located = [&] {
      Evidence e;
      e.file = file.shown;
      e.attempt = file.attempt;
      e.line = line_no;
      e.text = clip(line);
      e.rank = rank;
      e.host = host;
      e.time = origin.time ? origin.time : last_time;
      e.time_inferred = !origin.time && last_time.has_value();
      e.device = device;
      return e;
    };
    if (const auto waits = parse_ring_waits(line); waits && a.ring_waits.size() < kMaxEvidence) {
      a.ring_waits[{file.attempt, waits->rank}] = {waits->send_s, waits->recv_s, located()};
      continue;
    }
    if (const auto row = parse_link_row(line); row && a.link_rows.size() < kMaxEvidence) {
      a.link_rows.push_back(*row);
      a.link_row_lines.push_back(located());
      continue;
    }
    const auto match = classifier.classify(line);
    if (!match) continue;
    const harness::LogPattern& p = *match->pattern;
    if (d.evidence.size() >= kMaxEvidence) {
      ++d.evidence_dropped;
      continue;
    }
    Evidence e = located();
    e.pattern = p.name;
    e.role = p.kind == harness::LineKind::kDetection  ? "detection"
             : p.kind == harness::LineKind::kEvidence ? "evidence"
                                                      : "restart";
    e.label = p.mechanism;
    e.site = !p.site.empty() ? p.site : fallback_site(p.name);
    if (p.name == "nccl.result_name" && line.find("ncclRemoteError") != std::string::npos)
      e.site = fallback_site("nccl.remote_error");
    e.pointer = pointer_of(p.name);
    point_local_error_at_printer(p.name, line, e);
    e.peer = peer_address(line);
    // A step that Slurm ended at its time limit ran into the walltime: what ended the job, as a deadline.
    if (p.name == "slurm.step_cancelled" && contains(line, "DUE TO TIME LIMIT")) {
      e.role = "detection";
      e.label = "harness_deadline";
      d.failure = true;
    }
    if (p.kind == harness::LineKind::kDetection) {
      d.failure = true;
      if (rank >= 0) ++a.rank_detections[rank];
    }
    // A node's own record of broken hardware (its kernel, its tools) is a failure even where the job
    // printed no error: a slow job over a downgraded link or a congested port says nothing itself.
    if (p.kind == harness::LineKind::kEvidence && names_broken_hardware(p.name)) d.failure = true;
    // So is a launcher's word that a task was killed (srun's `task 1: Killed`): a rank killed before it
    // printed a word, whose peers' complaints the catalogue does not know, still failed.
    if (p.name == "srun.task_ended" && contains(line, ": Killed")) d.failure = true;
    d.evidence.push_back(std::move(e));
  }
}

// A launcher's line that names the failed rank: rank (or -1), host ("" unknown), weight, site.
struct Named {
  int rank = -1;
  std::string host;
  double weight = 0;
  std::string site;
  std::string why;
};

Named named_subject(const Evidence& e, const Analysis& a) {
  Named n;
  std::string value;
  if (e.pattern == "torchrun.worker_failed") {
    static const LineRegex exitcode(R"(exitcode: (-?\d+)\))");
    static const LineRegex local(R"(local_rank: (\d+))");
    const int code = exitcode.search(e.text, &value) ? to_int(value) : 0;
    const int local_rank = local.search(e.text, &value) ? to_int(value) : -1;
    // A signal that kills from outside or a crash; -6 (SIGABRT) and -15 are PyTorch's or the launcher's
    // own teardown after another failure.
    const bool crash = code == -9 || code == -11 || code == -7 || code == -4 || code == -8;
    n.weight = crash ? kCrashNamedWeight : 0;
    n.site = crash ? "dead_rank" : "";
    n.why = "torchrun saw local_rank " + std::to_string(local_rank) + " exit with " + std::to_string(code) +
            (code == -9    ? " (SIGKILL)"
             : code == -11 ? " (SIGSEGV)"
             : code == -6  ? " (SIGABRT)"
                           : "");
    // The global rank: torchrun's own summary, else the printer's host's ranks in order, or the local
    // rank on a one-host job.
    const std::string host = e.host;
    std::vector<int> on_host = host.empty() ? std::vector<int>{} : a.ranks_on(host);
    std::vector<int> summary;
    for (const auto& [key, rank] : a.torchrun_ranks)
      if (key.second == local_rank && (host.empty() || key.first == short_host(host)))
        summary.push_back(rank);
    if (summary.size() == 1) {
      n.rank = summary.front();
    } else if (local_rank >= 0 && local_rank < static_cast<int>(on_host.size())) {
      n.rank = on_host[static_cast<size_t>(local_rank)];
    } else if (local_rank >= 0 && a.hosts.size() <= 1) {
      n.rank = local_rank;
    }
    n.host = host.empty() && n.rank >= 0 && a.d.rank_hosts.count(n.rank) ? a.d.rank_hosts.at(n.rank) : host;
  } else if (e.pattern == "mpirun.noticed") {
    static const LineRegex rank(R"(process rank (\d+))");
    static const LineRegex node(R"(on node (\S+) exited)");
    if (rank.search(e.text, &value)) n.rank = to_int(value);
    if (node.search(e.text, &value)) n.host = value;
    n.weight = kCrashNamedWeight;
    n.site = "dead_rank";
    n.why = "mpirun saw rank " + std::to_string(n.rank) + " die of a signal";
  } else if (e.pattern == "srun.task_ended") {
    static const LineRegex node(R"(srun: error: ([^\s:]+): task)");
    static const LineRegex task(R"(: tasks? (\d+))");
    if (node.search(e.text, &value)) n.host = value;
    if (task.search(e.text, &value)) n.rank = to_int(value);
    // SIGTERM is most often the teardown (the time limit, the rest of a failed step); but a task that
    // srun saw end of SIGTERM before any other ended, with no cancellation of the step, was stopped from
    // outside (preemption, scancel of one task, a node's own shutdown).
    const bool terminated_first =
        contains(e.text, "Terminated") && a.first_srun_line == &e && !a.step_cancelled;
    const bool killed = contains(e.text, "Killed") || contains(e.text, "ignal") || terminated_first;
    // Terminated at the time limit while other tasks had exited by themselves (their watchdogs fired,
    // their errors ended them): this one was still there, stuck where no watchdog of its own could act.
    const bool still_running =
        !killed && contains(e.text, "Terminated") && a.step_cancelled && a.srun_task_exited;
    n.weight = killed ? kCrashNamedWeight : still_running ? kStillRunningAtLimitWeight : 0;
    n.site = killed ? "dead_rank" : still_running ? "host_hang" : "";
    n.why = "srun saw task " + std::to_string(n.rank) + " end (" +
            (terminated_first ? "SIGTERM, before any other task ended"
             : killed         ? "killed"
             : still_running  ? "SIGTERM at the time limit, after other tasks had exited by themselves"
                              : "exited") +
            ")";
  }
  return n;
}

std::string where(const Evidence& e) {
  return e.file + ":" + std::to_string(e.line);
}

// Where no rank announced its address (NCCL_DEBUG=WARN prints none) but one address is named by two or
// more ranks that lost it, and exactly one rank went quiet, the address is taken as the quiet rank's: a
// rank killed or frozen says nothing, and its peers' completion errors name it. Anything less certain
// (two quiet ranks, two such addresses) is left as it is.
void own_unmapped_address(Analysis& a, Scores& s) {
  Diagnosis& d = a.d;
  if (d.hang_candidates.size() != 1) return;
  std::string address;
  for (const auto& [peer, namers] : a.unmapped_address_namers) {
    if (namers.size() < 2) continue;
    if (!address.empty()) return;
    address = peer;
  }
  if (address.empty()) return;
  const int rank = d.hang_candidates.front();
  const std::string unit = "address " + address;
  const auto h = d.rank_hosts.find(rank);
  const std::string rank_unit_name = a.unit_of(rank, h == d.rank_hosts.end() ? "" : h->second);
  s.rank_level[rank] += s.host_level[unit];
  s.host_level.erase(unit);
  auto& reasons = s.reasons[rank_unit_name];
  for (const std::string& why : s.reasons[unit]) reasons.push_back(why);
  s.reasons.erase(unit);
  reasons.push_back(address + " is taken as rank " + std::to_string(rank) +
                    "'s: no rank printed its own address, " +
                    std::to_string(a.unmapped_address_namers[address].size()) + " ranks name it, and rank " +
                    std::to_string(rank) + " alone went quiet");
  d.address_ranks[address] = rank;
  for (Evidence& e : d.evidence)
    if (e.target == unit) e.target = rank_unit(rank);
}

// Every rank's watchdog fired, but they waited in different places: the ranks waiting for the GPU to
// finish a collective had left the NCCL call, while a rank whose watchdog found it still inside the call
// never left it. When one or two ranks were stuck in the call and at least as many waited on the GPU, the
// stuck ones are where the collective stopped (ncclfi-workload says "waiting in the NCCL call" or "waiting in
// the GPU stream").
template <typename ToRank>
void point_at_the_rank_stuck_in_the_call(Analysis& a, ToRank&& to_rank) {
  std::set<int> in_call, on_stream;
  std::map<int, const Evidence*> line_of;
  for (const Evidence& e : a.d.evidence) {
    if (e.pattern != "workload.gpu_watchdog" || e.rank < 0) continue;
    if (contains(e.text, "waiting in the NCCL call")) {
      in_call.insert(e.rank);
      line_of.emplace(e.rank, &e);
    } else if (contains(e.text, "waiting in the GPU stream")) {
      on_stream.insert(e.rank);
    }
  }
  if (in_call.empty() || in_call.size() > 2 || on_stream.size() < in_call.size()) return;
  for (int rank : in_call) {
    if (on_stream.count(rank)) continue;
    to_rank(rank, kHangWeight * 2,
            "rank " + std::to_string(rank) + "'s watchdog found it still inside the NCCL call at " +
                where(*line_of.at(rank)) + ", while " + std::to_string(on_stream.size()) +
                " ranks waited for the GPU: it never left the collective the others waited on");
    a.d.stuck_in_call.push_back(rank);
  }
}

// A line that says a peer reset or closed the connection: its printer lost that peer.
bool tells_a_lost_peer(const std::string& text) {
  return contains(text, "ECONNRESET") || contains(text, "Connection reset by peer") ||
         contains(text, "closed by remote peer") || contains(text, "Broken pipe") || contains(text, "EPIPE");
}

// The chain of lost connections: each line that names a peer is an edge from its printer to the rank it
// names. When two or more ranks' lines name peers, a rank that failed, is named, and names no one itself
// is where the chain ends: its own call failed (its error came back at once, with no connection lost
// before it), and every other rank lost a peer after it. A chain of one edge is enough when its end's own
// call failed: where a node's ranks reach each other over NVLink, the ranks beside a failed one wait for
// their watchdogs instead of losing a connection, and only the peer on the other node names it. A watchdog
// is not a failure of its own: any rank behind a lost peer ends on one.
template <typename ToRank>
void point_at_the_end_of_the_chain(Analysis& a, ToRank&& to_rank) {
  std::map<int, std::set<int>> names;  // printer -> the ranks its lines name
  std::set<int> named;
  for (const Evidence& e : a.d.evidence) {
    if (e.rank < 0 || e.peer.empty() || e.target.empty()) continue;
    int target = -1;
    if (e.target.rfind("rank ", 0) == 0) {
      target = to_int(e.target.substr(5));
    } else if (e.target.rfind("host ", 0) == 0) {
      const auto on_host = a.ranks_on(e.target.substr(5));
      if (on_host.size() == 1) target = on_host.front();
    }
    if (target < 0 || target == e.rank) continue;
    names[e.rank].insert(target);
    named.insert(target);
  }
  if (names.empty()) return;
  std::vector<int> ends;
  for (const auto& [rank, n] : a.rank_detections)
    if (!names.count(rank) && named.count(rank)) ends.push_back(rank);
  if (ends.size() != 1) return;
  if (names.size() == 1 && !std::any_of(a.d.evidence.begin(), a.d.evidence.end(), [&](const Evidence& e) {
        return e.rank == ends.front() && e.role == "detection" && !contains(e.pattern, "watchdog") &&
               !tells_a_lost_peer(e.text);
      }))
    return;
  std::string namers;
  for (const auto& [printer, targets] : names)
    if (targets.count(ends.front())) namers += (namers.empty() ? "" : ", ") + std::to_string(printer);
  to_rank(ends.front(), kPrinterDetectionWeight,
          "rank " + std::to_string(ends.front()) + " failed and names no peer, while rank(s) " + namers +
              " lost their connection to it: the chain of lost connections ends there");
}

// The same error, returned by one rank's own call and learned by the others afterwards: when exactly one
// rank's NCCL call itself returned the failing code (ncclfi-workload's "all_reduce (seq N) returned ...",
// PyTorch's "NCCL error in: ...") while two or more others learned of a failure through
// ncclCommGetAsyncError or a connection their peer closed, and every rank failed, the error began in that
// rank's call: the others' communicators only saw it leave.
template <typename ToRank>
void point_at_the_rank_whose_call_returned_it(Analysis& a, ToRank&& to_rank) {
  std::set<int> returned, learned;
  std::map<int, const Evidence*> line_of;
  for (const Evidence& e : a.d.evidence) {
    if (e.rank < 0 || e.role != "detection") continue;
    if (contains(e.text, ") returned ") || contains(e.text, "NCCL error in: ")) {
      returned.insert(e.rank);
      line_of.emplace(e.rank, &e);
    } else if (contains(e.text, "ncclCommGetAsyncError") || e.pattern == "nccl.socket_closed_by_peer" ||
               e.pattern == "nccl.remote_error_async") {
      learned.insert(e.rank);
    }
  }
  for (int r : returned) learned.erase(r);
  // A rank that printed no failure may be the one that died (killed, its node gone): its peers' calls
  // return the error as it leaves, so one of them returning it first says nothing then.
  std::set<int> failed;
  for (const auto& [rank, n] : a.rank_detections) failed.insert(rank);
  if (returned.size() != 1 || learned.size() < 2 || !a.every_rank_failed(failed)) return;
  const int rank = *returned.begin();
  to_rank(rank, kPrinterDetectionWeight,
          "rank " + std::to_string(rank) + "'s own call returned the error at " + where(*line_of.at(rank)) +
              ", while " + std::to_string(learned.size()) +
              " other ranks learned of a failure afterwards (an asynchronous error, a closed connection)");
}

// A watchdog that fired long after its timeout: it could not run while its process was stopped (SIGSTOP, a
// host that stopped scheduling it, a machine frozen under memory pressure), so it only saw the time once
// the process ran again. Its peers' watchdogs fired on time. The line says how long the op waited:
// ncclfi-cpu-ring's "within T s (waited W s", ncclfi-workload's "no progress for W ms (timeout T s",
// PyTorch's "Timeout(ms)=T) ran for W milliseconds".
std::optional<std::pair<double, double>> watchdog_wait(const Evidence& e) {
  static const re2::RE2 cpu_ring(R"(within ([0-9.]+) s \(waited ([0-9.]+) s)");
  static const re2::RE2 gpu(R"(made no progress for ([0-9.]+) ms \(timeout ([0-9.]+) s)");
  static const re2::RE2 torch(R"(Timeout\(ms\)=(\d+)\) ran for (\d+) milliseconds)");
  double timeout = 0, waited = 0;
  if (e.pattern == "workload.cpu_ring_watchdog" &&
      re2::RE2::PartialMatch(e.text, cpu_ring, &timeout, &waited))
    return std::make_pair(waited, timeout);
  if (e.pattern == "workload.gpu_watchdog" && re2::RE2::PartialMatch(e.text, gpu, &waited, &timeout))
    return std::make_pair(waited / 1000, timeout);
  if (re2::RE2::PartialMatch(e.text, torch, &timeout, &waited))
    return std::make_pair(waited / 1000, timeout / 1000);
  return std::nullopt;
}

template <typename ToRank>
void point_at_the_late_watchdog(Analysis& a, ToRank&& to_rank) {
  // Per launch: the ranks whose watchdog fired late, and whether any fired on time.
  std::map<int, std::map<int, const Evidence*>> late_in;
  std::map<int, bool> on_time_in;
  for (const Evidence& e : a.d.evidence) {
    if (e.rank < 0 || e.attempt > a.failed_attempt) continue;
    const auto wait = watchdog_wait(e);
    if (!wait) continue;
    const auto [waited, timeout] = *wait;
    // A watchdog polls every few milliseconds (PyTorch's every 100 ms or so) and fires on time; half a
    // second late, and more than a sixth of its timeout, it was not running.
    if (waited - timeout >= std::max(kLateWatchdogS, timeout / 6)) {
      late_in[e.attempt].emplace(e.rank, &e);
    } else {
      on_time_in[e.attempt] = true;
    }
  }
  // The failed launch's, else the newest earlier launch's: a rank that hangs now and then may fail the
  // last launch otherwise (resumed between two collectives, its next one fails on connections its peers
  // closed), while an earlier launch caught it stopped.
  if (late_in.empty()) return;
  const bool this_launch = late_in.count(a.failed_attempt) > 0;
  const int launch = this_launch ? a.failed_attempt : late_in.rbegin()->first;
  std::map<int, const Evidence*> late = late_in[launch];
  // An earlier launch's stopped rank counts only where it failed in the failed launch too (its own
  // error there, while the others' watchdogs fired): the same rank, the same trouble.
  if (!this_launch) {
    std::set<int> failed_now;
    for (const Evidence& e : a.d.evidence)
      if (e.role == "detection" && e.attempt == a.failed_attempt && !watchdog_wait(e))
        failed_now.insert(e.rank);
    for (auto it = late.begin(); it != late.end();)
      it = failed_now.count(it->first) ? std::next(it) : late.erase(it);
    if (late.empty()) return;
  }
  const bool on_time = on_time_in[launch];
  for (const auto& [rank, e] : late) {
    to_rank(rank, kPrinterDetectionWeight,
            "rank " + std::to_string(rank) + "'s watchdog fired long after its timeout at " + where(*e) +
                (on_time ? ", while its peers' fired on time" : "") +
                ": the process itself was stopped, and its watchdog could not run until it ran again" +
                (this_launch ? "" : " (an earlier launch)"));
    a.d.late_watchdog.push_back(rank);
  }
  if (!this_launch) return;
  // The ranks that printed no failure at all were stopped too and never ran again before the end (a
  // whole node or job frozen; only an outside deadline ends it): when no watchdog fired on time and no
  // rank failed otherwise, or when the others' fired on time, since a running rank's would have too.
  // Not where a launcher saw a rank die: a dead rank prints nothing either.
  if (late.empty() || a.launcher_saw_a_death() || (!on_time && a.rank_detections.size() != late.size()))
    return;
  for (const auto& [rank, lines] : a.rank_lines) {
    if (late.count(rank) || a.rank_detections.count(rank)) continue;
    to_rank(rank, kPrinterDetectionWeight,
            "rank " + std::to_string(rank) + " printed no failure while " +
                (on_time ? "its peers' watchdogs fired on time and a stopped rank's late"
                         : "the only rank that ran again found its watchdog late") +
                ": it was stopped too");
    a.d.late_watchdog.push_back(rank);
  }
}

// Where the ring stopped: ncclfi-cpu-ring's watchdog says the ring step it waited in ("seq 8 ... ring step
// 2 of 6 waits to receive from rank 0"). Once one link stops delivering, every rank soon waits, each a step
// behind its predecessor; the rank at the earliest point, waiting on a peer that is past it (or on its own
// send), is where the ring stopped: its link from that peer, or its own send, delivered nothing.
template <typename ToRank>
void point_at_where_the_ring_stopped(Analysis& a, ToRank&& to_rank) {
  if (!a.d.late_watchdog.empty()) return;  // a stopped process explains the wait
  static const re2::RE2 position(
      R"(allreduce seq (\d+) did not complete .*ring step (\d+) of \d+ waits (?:to receive from rank (\d+))?)");
  struct Where {
    std::pair<long, long> at;
    int from = -1;  // the rank it waits to receive from; -1: only its own send
    const Evidence* line = nullptr;
  };
  std::map<int, Where> ranks;
  for (const Evidence& e : a.d.evidence) {
    if (e.rank < 0 || e.attempt != a.failed_attempt || e.pattern != "workload.cpu_ring_watchdog") continue;
    long seq = 0, step = 0;
    std::string from;
    if (!re2::RE2::PartialMatch(e.text, position, &seq, &step, &from)) continue;
    ranks[e.rank] = Where{{seq, step}, from.empty() ? -1 : to_int(from), &e};
  }
  if (ranks.size() < 2) return;
  std::pair<long, long> earliest = ranks.begin()->second.at;
  for (const auto& [rank, w] : ranks) earliest = std::min(earliest, w.at);
  const int world = a.world_size();
  std::vector<int> heads;
  for (const auto& [rank, w] : ranks) {
    if (w.at != earliest) continue;
    // Its predecessor is past it: further on in the ring, or it lost a peer before its own watchdog fired
    // (a reset once the others had left). A predecessor that failed on its own (a setup call) or printed
    // nothing may be where it stopped.
    const auto from = ranks.find(w.from);
    const bool from_past = from != ranks.end() ? from->second.at > earliest : a.lost_a_peer.count(w.from) > 0;
    // A send that never completed stops the ring there only if its receiver is alive and waiting too (or
    // lost a peer once the others left): a send to a rank that died or hung silently is that rank's doing.
    const bool receiver_waits =
        world > 0 && (ranks.count((rank + 1) % world) > 0 || a.lost_a_peer.count((rank + 1) % world) > 0);
    if (w.from < 0 ? receiver_waits : from_past) heads.push_back(rank);
  }
  if (heads.size() != 1) return;
  const Where& w = ranks.at(heads.front());
  to_rank(heads.front(), kPrinterDetectionWeight,
          "the ring stopped at rank " + std::to_string(heads.front()) + " (" + where(*w.line) + "): " +
              (w.from < 0 ? "its own send never completed"
                          : "it waited at the earliest step for rank " + std::to_string(w.from) +
                                ", which was already past it") +
              ", and every other rank waited behind it");
  a.d.stopped_at = heads.front();
  // A send that never completed: the port would not take the data (paused, congested). A send its
  // sender finished whose data never arrived: lost on the way, in the NIC or on its link.
  a.d.stop_site = w.from < 0 ? "congestion" : "nic";
}

// The rank left behind: every watchdog names the collective it waited on (ncclfi-workload's "(seq N)",
// PyTorch's "WorkNCCL(SeqNum=N"); when one rank waits on an earlier collective than all the others, they
// finished the one it is stuck in, so they sent it all it needed: the data into it never arrived.
template <typename ToRank>
void point_at_the_rank_left_behind(Analysis& a, ToRank&& to_rank) {
  if (!a.d.late_watchdog.empty() || a.d.stopped_at >= 0) return;
  static const re2::RE2 workload(R"(watchdog: \S+ \(seq (\d+)\) made no progress)");
  static const re2::RE2 torch(R"(Watchdog caught collective operation timeout: WorkNCCL\(SeqNum=(\d+))");
  std::map<int, std::pair<long, const Evidence*>> ranks;
  for (const Evidence& e : a.d.evidence) {
    long seq = 0;
    if (e.rank < 0 || e.attempt != a.failed_attempt || ranks.count(e.rank)) continue;
    if (re2::RE2::PartialMatch(e.text, workload, &seq) || re2::RE2::PartialMatch(e.text, torch, &seq))
      ranks[e.rank] = {seq, &e};
  }
  if (ranks.size() < 2) return;
  const auto behind = std::min_element(ranks.begin(), ranks.end(), [](const auto& x, const auto& y) {
    return x.second.first < y.second.first;
  });
  for (const auto& [rank, at] : ranks)
    if (rank != behind->first && at.first <= behind->second.first) return;  // not alone behind
  to_rank(behind->first, kPrinterDetectionWeight,
          "rank " + std::to_string(behind->first) + " waited on collective " +
              std::to_string(behind->second.first) + " (" + where(*behind->second.second) + ") while " +
              std::to_string(ranks.size() - 1) +
              " other rank(s) had finished it and waited on a later one: what it needed never arrived");
  a.d.stopped_at = behind->first;
  a.d.stop_site = "nic";
}

// A rank that printed no failure while others timed out, but whose process still answered (PyTorch's
// "Observed flight recorder dump signal from another rank": its watchdog thread ran, and its own watchdog,
// which watches the work handed to the GPU, never fired): it was alive and never handed the collective to
// its GPU. It hung on its host (a thread blocked in the call, a lock, a data loader), not on the GPU, and
// it did not die.
void recognise_alive_but_silent(Analysis& a) {
  if (a.d.hang_candidates.size() != 1) return;
  const int rank = a.d.hang_candidates.front();
  for (const Evidence& e : a.d.evidence)
    if (e.rank == rank && e.pattern == "torch.flight_recorder" && contains(e.text, "from another rank")) {
      a.d.alive_but_silent = rank;
      return;
    }
}

// A job of one rank (ncclfi-workload's header "# ncclfi-workload: 1 ranks", or NCCL's init lines, every
// communicator "nranks 1"): no peer to wait on, so a collective that made no progress stopped in that
// rank, on its GPU or on its host (vote_sites reads which).
template <typename ToRank>
void point_at_the_only_rank(Analysis& a, ToRank&& to_rank) {
  if (a.stated_world_size != 1 || a.rank_detections.size() != 1) return;
  const int rank = a.rank_detections.begin()->first;
  to_rank(rank, kPrinterDetectionWeight, "the job had one rank, and it failed: there is no peer to blame");
  a.d.one_rank_job = true;
}

// Where wrong data entered the ring: ncclfi-cpu-ring passes each reduced block from rank r to rank r+1, so
// a block corrupted on its way into rank r is wrong on r and on the ranks after it. Of the ranks that
// found wrong elements in the same all-reduce, the one whose predecessor found none is where it entered.
template <typename ToRank>
void point_at_where_wrong_data_entered(Analysis& a, ToRank&& to_rank) {
  static const re2::RE2 wrong(R"(rank (\d+) allreduce seq (\d+): \d+ of \d+ elements wrong)");
  std::map<long, std::map<int, const Evidence*>> by_seq;
  for (const Evidence& e : a.d.evidence) {
    if (e.pattern != "workload.elements_wrong" || !contains(e.text, "cpu-ring")) continue;
    int rank = -1;
    long seq = 0;
    if (e.attempt != a.failed_attempt || !re2::RE2::PartialMatch(e.text, wrong, &rank, &seq)) continue;
    by_seq[seq].emplace(rank, &e);
  }
  if (by_seq.empty()) return;
  const auto& [seq, found] = *by_seq.begin();  // the first all-reduce that went wrong
  const int world = a.world_size();
  if (found.size() < 2 || static_cast<int>(found.size()) >= world) return;
  std::vector<int> heads;
  for (const auto& [rank, e] : found)
    if (!found.count((rank + world - 1) % world)) heads.push_back(rank);
  if (heads.size() != 1) return;
  const int head = heads.front();
  to_rank(head, kPrinterDetectionWeight * 2,
          "all-reduce seq " + std::to_string(seq) + " was wrong on " + std::to_string(found.size()) +
              " ranks in a row of the ring, first on rank " + std::to_string(head) + " (" +
              where(*found.at(head)) + ") whose predecessor, rank " +
              std::to_string((head + world - 1) % world) +
              ", found none: the data went wrong on its way into rank " + std::to_string(head));
}

// A rank that failed of its own accord while the others only lost a peer: when every rank failed, one or
// more report that a peer reset or closed its connection, and exactly one reports no such loss, its
// failure began in its own stack (its own network call failed, with its connections still up), and the
// resets are its peers seeing it leave.
template <typename ToRank>
void point_at_the_rank_that_lost_no_peer(Analysis& a, ToRank&& to_rank) {
  const std::set<int>& lost = a.lost_a_peer;
  std::set<int> failed, checked, erred, nccl_erred;  // erred: of an error, not only a timeout
  for (const Evidence& e : a.d.evidence) {
    if (e.rank < 0 || e.attempt != a.failed_attempt) continue;
    if (e.role == "detection") failed.insert(e.rank);
    if (e.role == "detection" && !kTimeoutMechanisms.count(e.label)) erred.insert(e.rank);
    if (e.role == "detection" && (e.label == "api_error" || e.label == "async_error"))
      nccl_erred.insert(e.rank);
    if (e.label == "verification") checked.insert(e.rank);
  }
  std::vector<int> own;
  for (int r : failed)
    if (!lost.count(r)) own.push_back(r);
  // Two or more ranks that lost a peer say whom they lost; one is enough only when every rank failed (a
  // job of two), since a rank that printed no failure may be the one that died. A rank that only timed
  // out did not fail on its own: its watchdog ended it, and its peers lost it then.
  const bool peers_saw_it = lost.size() >= 2 || (!lost.empty() && a.every_rank_failed(failed));
  if (own.size() != 1 || !peers_saw_it || !erred.count(own.front())) return;
  to_rank(own.front(), kPrinterDetectionWeight,
          "rank " + std::to_string(own.front()) + " failed with its connections still up, while " +
              std::to_string(lost.size()) +
              " ranks reported that a peer reset or closed theirs: the failure began in its own stack");
  // Its own NCCL or network call failed, where no data check did: its network device.
  if (!checked.count(own.front()) && nccl_erred.count(own.front())) a.d.failed_on_its_own = own.front();
}

// NCCL's count of a connect's failed attempts so far ("retrying (3/34)"), 0 where the line has none.
int connect_retries(const std::string& text) {
  const size_t at = text.find("retrying (");
  return at == std::string::npos ? 0 : std::atoi(text.c_str() + at + std::strlen("retrying ("));
}
constexpr int kRetriesOfAKeptOutRank = 3;

// A rank whose connection to the bootstrap failed for good (NCCL's socket connect ran out of retries, or
// failed outright) while every other rank printed no failure: they reached the root and wait in their
// setup for it. What kept it out is on its own side (its interface, its route, a firewall in front of it):
// the root answered the others. Where the root itself is gone, every rank but the root fails alike and
// only the root is left waiting: nothing is named here.
template <typename ToRank>
void point_at_the_rank_kept_out_of_bootstrap(Analysis& a, ToRank&& to_rank) {
  // Its connect ran out of retries, or the job ended while it still retried (NCCL's 34 retries take a
  // minute: a time limit may come first). One or two retries are a root that was not listening yet.
  std::set<int> kept_out;
  for (const Evidence& e : a.d.evidence) {
    if (e.rank < 0 || e.attempt != a.failed_attempt) continue;
    if (e.pattern == "nccl.socket_connect_failed") kept_out.insert(e.rank);
    if (e.pattern == "nccl.socket_connect_retry" && connect_retries(e.text) >= kRetriesOfAKeptOutRank)
      kept_out.insert(e.rank);
  }
  if (kept_out.empty() || a.launcher_saw_a_death()) return;
  std::vector<int> waiting;
  for (const auto& [rank, lines] : a.rank_lines) {
    if (kept_out.count(rank)) continue;
    if (a.rank_detections.count(rank)) return;  // another rank failed too: not only kept out
    waiting.push_back(rank);
  }
  // The root and at least one more rank must have got in: a rank alone with the root cannot tell
  // whether the root listens at all.
  if (waiting.size() < 2) return;
  for (int r : kept_out) {
    a.d.kept_out_of_bootstrap.push_back(r);
    to_rank(r, 2 * kPrinterDetectionWeight,
            "rank " + std::to_string(r) + " could not connect to the bootstrap while " +
                std::to_string(waiting.size()) +
                " other rank(s) reached it and waited: what kept it out is on its side (interface, route, "
                "firewall)");
  }
}

// The rank on a node of several whose GPU or HCA a line of the node's tool output is about: the node's
// ranks in rank order are its local ranks 0, 1, ..., and local rank i has GPU i and mlx5_i. -1 where the
// line names no device or its node has one rank (the node is the unit then, as before).
int rank_of_device(const Analysis& a, const Evidence& e) {
  if (e.device < 0 || e.host.empty()) return -1;
  const std::vector<int> ranks = a.ranks_on(e.host);
  if (ranks.size() < 2 || static_cast<size_t>(e.device) >= ranks.size()) return -1;
  return ranks[static_cast<size_t>(e.device)];
}

void score(Analysis& a, Scores& s) {
  Diagnosis& d = a.d;
  for (const Evidence& e : d.evidence)
    if (e.role == "detection") a.failed_attempt = std::max(a.failed_attempt, e.attempt);
  for (const Evidence& e : d.evidence)
    if (e.rank >= 0 && e.attempt == a.failed_attempt && tells_a_lost_peer(e.text))
      a.lost_a_peer.insert(e.rank);
  auto to_rank = [&](int rank, double w, const std::string& why) {
    s.rank_level[rank] += w;
    const auto h = d.rank_hosts.find(rank);
    s.reasons[a.unit_of(rank, h == d.rank_hosts.end() ? "" : h->second)].push_back(why);
  };
  auto to_unit = [&](const std::string& unit, double w, const std::string& why) {
    s.host_level[unit] += w;
    s.reasons[unit].push_back(why);
  };
  // The unit a peer address names: the one rank that announced it, else one rank when its host has
  // exactly one other rank, else the host.
  auto to_peer = [&](Evidence& e, double w) {
    if (e.peer.empty()) return;
    const std::string host = a.host_of_address(e.peer);
    const std::string why = e.pattern + " on rank " + std::to_string(e.rank) + " names " + e.peer +
                            (host.empty() ? "" : " (" + host + ")") + " at " + where(e);
    if (const auto owner = a.address_announcers.find(e.peer); owner != a.address_announcers.end() &&
                                                              owner->second.size() == 1 &&
                                                              *owner->second.begin() != e.rank) {
      const int peer = *owner->second.begin();
      e.target = rank_unit(peer);
      to_rank(peer, w, why);
      return;
    }
    if (host.empty()) {
      e.target = "address " + e.peer;
      to_unit(e.target, w, why);
      if (e.rank >= 0) a.unmapped_address_namers[e.peer].insert(e.rank);
      return;
    }
    std::vector<int> others;
    for (int r : a.ranks_on(host))
      if (r != e.rank) others.push_back(r);
    if (others.size() == 1 && host == e.host) {
      e.target = rank_unit(others.front());
      to_rank(others.front(), w, why);
    } else {
      e.target = "host " + host;
      to_unit(host, w, why);
    }
  };
  // A rank that prints one signature again and again (a WARN per channel, per retry) says it once: the
  // repeats add nothing toward the culprit, or a chatty rank would outweigh a quiet one's single line.
  std::set<std::tuple<std::string, int, std::string, std::string>> counted;
  for (Evidence& e : d.evidence) {
    if (e.pointer != Pointer::kNone && e.pointer != Pointer::kNamed &&
        !counted.emplace(e.pattern, e.rank, e.rank >= 0 ? std::string() : e.host, e.peer).second) {
      continue;
    }
    switch (e.pointer) {
      case Pointer::kNone:
        break;
      case Pointer::kPrinter: {
        const double w = e.role == "evidence" ? kPrinterEvidenceWeight : kPrinterDetectionWeight;
        const std::string why = e.pattern + " printed by " +
                                (e.rank >= 0 ? "rank " + std::to_string(e.rank) : "host " + e.host) + " at " +
                                where(e);
        e.weight = w;
        if (e.rank >= 0) {
          e.target = rank_unit(e.rank);
          to_rank(e.rank, w, why);
        } else if (const int rank = rank_of_device(a, e); rank >= 0) {
          e.target = rank_unit(rank);
          to_rank(rank, w,
                  why + " (its device " + std::to_string(e.device) + ": rank " + std::to_string(rank) + ")");
        } else if (!e.host.empty()) {
          e.target = "host " + e.host;
          to_unit(e.host, w, why);
        }
        break;
      }
      case Pointer::kPeer:
        e.weight = kPeerWeight;
        to_peer(e, kPeerWeight);
        break;
      case Pointer::kEitherEnd:
        e.weight = kEitherEndWeight;
        if (e.rank >= 0) {
          to_rank(e.rank, kEitherEndWeight,
                  e.pattern + " printed by rank " + std::to_string(e.rank) + " at " + where(e));
        } else if (!e.host.empty()) {
          to_unit(e.host, kEitherEndWeight, e.pattern + " printed on " + e.host + " at " + where(e));
        }
        to_peer(e, kEitherEndWeight);
        break;
      case Pointer::kNamed: {
        const Named n = named_subject(e, a);
        if (n.weight <= 0) {
          e.site.clear();  // an exit status or SIGTERM: the teardown after some failure, no site of its own
          break;
        }
        e.weight = n.weight;
        if (!n.site.empty()) e.site = n.site;
        const std::string why = n.why + " at " + where(e);
        if (n.rank >= 0) {
          e.target = rank_unit(n.rank);
          if (!n.host.empty() && !d.rank_hosts.count(n.rank)) d.rank_hosts[n.rank] = n.host;
          to_rank(n.rank, n.weight, why);
        } else if (!n.host.empty()) {
          e.target = "host " + n.host;
          to_unit(n.host, n.weight, why);
        }
        break;
      }
    }
  }
  point_at_the_rank_stuck_in_the_call(a, to_rank);
  point_at_the_late_watchdog(a, to_rank);
  point_at_where_the_ring_stopped(a, to_rank);
  point_at_the_rank_left_behind(a, to_rank);
  point_at_the_only_rank(a, to_rank);
  point_at_where_wrong_data_entered(a, to_rank);
  point_at_the_rank_that_lost_no_peer(a, to_rank);
  point_at_the_end_of_the_chain(a, to_rank);
  point_at_the_rank_whose_call_returned_it(a, to_rank);
  point_at_the_rank_kept_out_of_bootstrap(a, to_rank);
  // Ranks that printed no failure while others did: hung, or gone without a word (unless they were
  // waiting in the bootstrap for a rank kept out of it).
  if (!a.rank_detections.empty() && d.kept_out_of_bootstrap.empty()) {
    for (const auto& [rank, lines] : a.rank_lines) {
      if (a.rank_detections.count(rank) || s.rank_level.count(rank)) continue;
      d.hang_candidates.push_back(rank);
      to_rank(rank, kHangWeight,
              "rank " + std::to_string(rank) +
                  (lines == 0 ? " printed nothing at all"
                              : " printed no failure (" + std::to_string(lines) + " lines)") +
                  " while " + std::to_string(a.rank_detections.size()) +
                  " rank(s) failed: hung, or gone without a word");
    }
  }
  own_unmapped_address(a, s);
  recognise_alive_but_silent(a);
}

void choose_culprit(Analysis& a, const Scores& s) {
  Diagnosis& d = a.d;
  std::map<std::string, Candidate> units;
  for (const auto& [unit, w] : s.host_level) units[unit].score += w;
  for (const auto& [rank, w] : s.rank_level) {
    const auto h = d.rank_hosts.find(rank);
    Candidate& c = units[a.unit_of(rank, h == d.rank_hosts.end() ? "" : h->second)];
    c.score += w;
  }
  for (auto& [unit, c] : units) {
    c.unit = unit;
    if (const auto it = s.reasons.find(unit); it != s.reasons.end()) c.reasons = it->second;
    c.ranks = a.ranks_on(unit);
    if (unit.rfind("rank ", 0) == 0) c.ranks = {to_int(unit.substr(5))};
    d.candidates.push_back(c);
  }
  std::stable_sort(d.candidates.begin(), d.candidates.end(),
                   [](const Candidate& x, const Candidate& y) { return x.score > y.score; });
  if (d.candidates.empty()) return;
  // Rank-level pointers name ranks; a host's own evidence (its kernel, its NIC) names all of its ranks.
  auto culprits_of = [&](const Candidate& c) {
    double rank_sum = 0, rank_max = 0;
    for (int r : c.ranks) {
      const auto it = s.rank_level.find(r);
      const double w = it == s.rank_level.end() ? 0 : it->second;
      rank_sum += w;
      rank_max = std::max(rank_max, w);
    }
    const auto host_it = s.host_level.find(c.unit);
    const double host_w = host_it == s.host_level.end() ? 0 : host_it->second;
    std::vector<int> ranks;
    for (int r : c.ranks) {
      const auto it = s.rank_level.find(r);
      const double w = it == s.rank_level.end() ? 0 : it->second;
      if (host_w > rank_sum || (rank_max > 0 && w >= 0.5 * rank_max)) ranks.push_back(r);
    }
    return ranks;
  };
  auto is_host = [](const std::string& unit) {
    return unit.rfind("rank ", 0) != 0 && unit.rfind("address ", 0) != 0;
  };
  const Candidate& top = d.candidates.front();
  for (const Candidate& c : d.candidates) {
    if (c.score < top.score - 1e-9) break;
    d.tied_units.push_back(c.unit);
    for (int r : culprits_of(c)) d.culprit_ranks.push_back(r);
  }
  std::sort(d.culprit_ranks.begin(), d.culprit_ranks.end());
  if (d.tied_units.size() == 1) {
    d.tied_units.clear();
    d.culprit_host = is_host(top.unit) ? top.unit : "";
  }
  for (const auto& [rank, n] : a.rank_detections) {
    if (std::find(d.culprit_ranks.begin(), d.culprit_ranks.end(), rank) == d.culprit_ranks.end())
      d.lost_peer_ranks.push_back(rank);
  }
}

bool lost_peer_rank(int rank, const Diagnosis& d) {
  return rank >= 0 &&
         std::find(d.lost_peer_ranks.begin(), d.lost_peer_ranks.end(), rank) != d.lost_peer_ranks.end();
}

bool about_culprit(const Evidence& e, const Diagnosis& d) {
  const Candidate& top = d.candidates.front();
  if (e.target == "host " + top.unit || e.target == top.unit) return true;
  for (int r : d.culprit_ranks)
    if (e.target == rank_unit(r) ||
        (e.pointer != Pointer::kPeer && e.pointer != Pointer::kNamed && e.rank == r))
      return true;
  return e.rank < 0 && !e.host.empty() && e.host == d.culprit_host && e.pointer == Pointer::kPrinter;
}

void vote_sites(Diagnosis& d) {
  // As toward the culprit, a signature repeated by one rank or host votes once: a NaN loss printed at every
  // step says no more about the site than the first one, and would drown the one Xid line that does.
  std::set<std::tuple<std::string, int, std::string>> voted;
  for (const Evidence& e : d.evidence) {
    const auto sites = split_sites(e.site);
    if (sites.empty()) continue;
    if (!voted.emplace(e.pattern, e.rank, e.rank >= 0 ? std::string() : e.host).second) continue;
    double w = e.role == "evidence" && e.pointer == Pointer::kPrinter ? 2 : 1;
    if (!d.candidates.empty() && about_culprit(e, d)) w *= 2;
    // A rank that only lost a peer prints what its own transport saw of the loss (a completion error, a
    // closed socket), whatever the peer died of: the culprit's own lines say more about the site.
    if (lost_peer_rank(e.rank, d)) w *= kLostPeerSiteFactor;
    // A node's own record of its hardware (a port down, error counters, a link trained down) says which
    // part broke; a job's symptoms and a link test only say how it showed (a slow link is congested or
    // degraded alike).
    if (names_broken_hardware(e.pattern)) w *= kHardwareRecordSiteFactor;
    for (const auto& site : sites) d.site_votes[site] += w / static_cast<double>(sites.size());
  }
  if (!d.hang_candidates.empty()) {
    // A rank gone quiet: hung, or dead; the logs alone cannot tell, unless the others only timed out: a
    // dead rank's peers get errors (a reset, a completion error), a hung one's only wait.
    const bool only_timeouts = std::all_of(d.evidence.begin(), d.evidence.end(), [](const Evidence& e) {
      return e.role != "detection" || kTimeoutMechanisms.count(e.label) > 0;
    });
    std::vector<const char*> sites = {"host_hang", "gpu_hang"};
    if (!only_timeouts) sites.push_back("dead_rank");
    for (const char* site : sites)
      d.site_votes[site] += static_cast<double>(d.hang_candidates.size()) / static_cast<double>(sites.size());
  }
  // A rank stuck inside the call (a thread blocked in NCCL's host code, a lock, a host that stopped
  // scheduling it): its GPU was never given the work, so the host is where it hung.
  if (!d.stuck_in_call.empty())
    d.site_votes["host_hang"] += 2.0 * static_cast<double>(d.stuck_in_call.size());
  if (!d.stop_site.empty()) d.site_votes[d.stop_site] += 2.0;
  if (d.alive_but_silent >= 0) d.site_votes["host_hang"] += 2.0;
  // The only rank of a job stopped where its own watchdog found it: ncclfi-workload's says "waiting in
  // the GPU stream" or "waiting in the NCCL call". PyTorch's watches only work already handed to the GPU
  // (a rank stuck in the call never enqueued it), so its timeout there is the GPU's.
  if (d.one_rank_job) {
    for (const Evidence& e : d.evidence) {
      const bool torch = e.pattern.rfind("torch.watchdog_timeout", 0) == 0;  // either wording
      if (e.pattern != "workload.gpu_watchdog" && !torch) continue;
      if (torch || contains(e.text, "waiting in the GPU stream")) d.site_votes["gpu_hang"] += 2.0;
      if (contains(e.text, "waiting in the NCCL call")) d.site_votes["host_hang"] += 2.0;
      break;
    }
  }
  // A process whose watchdog could not run on time was stopped on its host.
  if (!d.late_watchdog.empty())
    d.site_votes["host_hang"] += 2.0 * static_cast<double>(d.late_watchdog.size());
  // A rank whose own network call failed while its peers only lost it: its network device, not its process
  // (which went on to report the failure).
  if (d.failed_on_its_own >= 0) d.site_votes["nic"] += 2.0;
  // A rank kept out of the bootstrap while the others waited in it: the bootstrap, not a dead process.
  if (!d.kept_out_of_bootstrap.empty()) d.site_votes["bootstrap"] += 2.0;
  double best = 0;
  for (const auto& [site, v] : d.site_votes) {
    if (v > best) {
      best = v;
      d.site = site;
    }
  }
  for (const auto& [site, v] : d.site_votes)
    if (v > best - 1e-9) d.tied_sites.push_back(site);
  if (d.tied_sites.size() == 1) d.tied_sites.clear();
}

// A NIC that failed in two or more earlier launches and let the last one run clean came back by itself,
// again and again: a dead NIC stays dead, a flapping link (a bad cable or transceiver, a port that
// retrains) goes down and up. The completion errors and port errors of each failure are the same either
// way; only the launches tell. One failure that a restart ran clean past is a single loss, not a link
// that flaps: it stays the NIC's.
void recognise_flapping_link(const Analysis& a, Diagnosis& d) {
  const bool nic_decided =
      d.site == "nic" || std::find(d.tied_sites.begin(), d.tied_sites.end(), "nic") != d.tied_sites.end();
  if (!nic_decided || a.last_attempt < 1) return;
  std::set<int> failed_launches;
  for (const Evidence& e : d.evidence) {
    if (e.role == "detection" && e.attempt == a.last_attempt) return;  // the last launch failed too
    const auto sites = split_sites(e.site);
    if (e.attempt >= 0 && std::find(sites.begin(), sites.end(), "nic") != sites.end())
      failed_launches.insert(e.attempt);
  }
  if (failed_launches.size() < 2) return;
  d.site = "degraded_link";
  d.tied_sites.clear();
  d.site_why = "the network failed in " + std::to_string(failed_launches.size()) +
               " launch(es) and the last launch (attempt " + std::to_string(a.last_attempt) +
               ") ran without a failure: the link came back, so it flaps; a dead NIC stays dead";
}

// A job that stopped making progress and was ended only by the scheduler's time limit, with no watchdog,
// timeout or error of its own before that: whatever hung it, the safety net that should have ended it
// never acted. That is the job's configuration (a timeout switched off, or longer than the time limit),
// and it is what the operator has to fix first.
void recognise_missing_safety_net(Diagnosis& d) {
  // A rank kept out of the bootstrap: the others waited in their setup for it, which no watchdog covers.
  if (!d.kept_out_of_bootstrap.empty()) return;
  bool deadline = false;
  for (const Evidence& e : d.evidence) {
    // A launcher saw a rank die of a signal (srun's `Killed`; the time limit's is `Terminated`): the
    // others hung because it was gone, and a dead rank, not a setting, is what the operator must fix.
    if (e.pointer == Pointer::kNamed && e.site == "dead_rank") return;
    if (e.role != "detection") continue;
    if (e.label != "harness_deadline") return;
    deadline = true;
  }
  if (!deadline) return;
  d.site = "configuration";
  d.tied_sites.clear();
  d.site_why =
      "nothing in the job noticed the hang before the scheduler's time limit ended it: no watchdog or "
      "timeout "
      "fired, so they are off or longer than the limit";
}

// A net plugin's connection-setup call that failed (ncclfi-cpu-ring's `net plugin call connect failed`):
// the job was still setting up its connections, as in bootstrap.
bool failed_in_setup(const Evidence& e) {
  static const re2::RE2 setup_call(R"(net plugin call (?:listen|connect|accept) failed)");
  return e.label == "bootstrap" || re2::RE2::PartialMatch(e.text, setup_call);
}

void decide_symptom(Diagnosis& d) {
  std::set<std::string> mechanisms;
  bool crash_named = false;
  bool all_in_setup = true;  // every detection failed in setting up the job's connections
  for (const Evidence& e : d.evidence) {
    if (e.role == "detection") {
      mechanisms.insert(e.label);
      all_in_setup = all_in_setup && failed_in_setup(e);
    }
    if (e.pointer == Pointer::kNamed && e.site == "dead_rank") crash_named = true;
  }
  const bool only_timeouts = std::all_of(mechanisms.begin(), mechanisms.end(),
                                         [&](const std::string& m) { return kTimeoutMechanisms.count(m); });
  const auto link_finding = [&](const char* pattern) {
    return std::any_of(d.evidence.begin(), d.evidence.end(),
                       [&](const Evidence& e) { return e.pattern == pattern; });
  };
  if (mechanisms.empty() && (link_finding("link_test.wrong_data") || link_finding("link_test.wrong_rank"))) {
    d.symptom = "wrong data / NaN";
    d.symptom_why = "no error in the job; the link test found a link that delivers wrong data";
  } else if (mechanisms.empty() &&
             (link_finding("link_test.slow_link") || link_finding("link_test.slow_rank"))) {
    d.symptom = "slow with no error";
    d.symptom_why = "no error in the job; the link test found a slow link";
  } else if (mechanisms.empty() && std::any_of(d.evidence.begin(), d.evidence.end(), [](const Evidence& e) {
               return names_broken_hardware(e.pattern) &&
                      (e.site == "pcie" || e.site == "congestion" || e.site == "degraded_link");
             })) {
    // A link that trained down, a congested port or a link whose errors the link layer resends slows the
    // job and prints nothing in it.
    d.symptom = "slow with no error";
    d.symptom_why =
        "no error in the job; a node's kernel or tools show a slower PCIe link, a congested port "
        "or a link that counts errors";
  } else if (mechanisms.count("verification") || mechanisms.count("nan_check")) {
    d.symptom = "wrong data / NaN";
    d.symptom_why = "a data check failed";
  } else if ((!mechanisms.empty() && all_in_setup) || d.site == "bootstrap") {
    d.symptom = "failed to start";
    d.symptom_why = "the failures are in setting up connections (bootstrap)";
  } else if (d.stopped_at >= 0 || !d.late_watchdog.empty() || d.alive_but_silent >= 0) {
    d.symptom = "hung";
    d.symptom_why =
        d.stopped_at >= 0         ? "the collective stopped at one rank and every other waited behind it; "
                                    "errors came after"
        : d.alive_but_silent >= 0 ? "one rank, alive, never joined the collective the others timed out on"
                                  : "a process stopped and its peers' watchdogs fired";
  } else if (crash_named || (d.tied_sites.empty() && (d.site == "dead_rank" || d.site == "gpu_fault"))) {
    d.symptom = "crashed or died";
    d.symptom_why =
        crash_named ? "a launcher saw a rank die of a signal" : "the lines point to a dead process";
  } else if (only_timeouts) {
    d.symptom = "hung";
    d.symptom_why = "the ranks only timed out: no error before the timeouts";
  } else {
    d.symptom = "crashed or died";
    std::string names;
    for (const auto& m : mechanisms) names += (names.empty() ? "" : ", ") + m;
    d.symptom_why = "errors, not only timeouts: " + names;
  }
}

const std::map<std::string, std::string>& site_checks() {
  static const std::map<std::string, std::string> checks = {
      {"nic",
       "the culprit host's kernel log (mlx5 `Link down`, a port error) and `ibstat`/`ibv_devinfo` port "
       "state tell a dead NIC from a degraded link"},
      {"degraded_link",
       "link error counters on both ends (`perfquery` symbol and link-recovery errors, "
       "`ethtool -S`): a degraded link retries and slows without a link-down message"},
      {"congestion",
       "switch port counters (PortXmitWait, ECN marks) and whether other jobs share the links; "
       "congestion slows every rank on the path, not one"},
      {"dead_rank",
       "the culprit's exit status and the kernel log of its host (`dmesg | grep -i -e oom -e "
       "killed`): who killed it, or why it crashed"},
      {"host_hang",
       "a stack of the culprit's process (`py-spy dump`, `gdb -p`) and whether its host answers; "
       "a hung host prints nothing at all"},
      {"gpu_hang",
       "`nvidia-smi` on the culprit host (a GPU at 100% with no progress) and Xid lines in its "
       "kernel log"},
      {"gpu_fault", "Xid lines in the culprit host's kernel log (`dmesg | grep Xid`) name the GPU fault"},
      {"nvlink", "`nvidia-smi nvlink -s` and Xid 74 in the culprit host's kernel log"},
      {"pcie", "`lspci -vv` link status (speed, width) and Xid 79 in the culprit host's kernel log"},
      {"bootstrap",
       "whether every rank can reach the others' addresses (NCCL_SOCKET_IFNAME, firewalls): "
       "NCCL_DEBUG=INFO's `Bootstrap : Using` lines"},
      {"configuration", "the job's environment (NCCL_*, CUDA_VISIBLE_DEVICES) against a run that works"},
  };
  return checks;
}

void decide_confidence(Diagnosis& d) {
  double total = 0;
  for (const auto& [site, v] : d.site_votes) total += v;
  const double site_share = total > 0 ? d.site_votes[d.site] / total : 0;
  double scores = 0;
  for (const Candidate& c : d.candidates) scores += c.score;
  const double culprit_share = scores > 0 && !d.candidates.empty() ? d.candidates.front().score / scores : 0;
  d.confidence = std::round(site_share * (0.5 + 0.5 * culprit_share) * 100) / 100;
  // The candidate sites worth telling apart: within a third of the top one's votes.
  std::vector<std::pair<double, std::string>> ranked;
  for (const auto& [site, v] : d.site_votes) ranked.emplace_back(v, site);
  std::sort(ranked.rbegin(), ranked.rend());
  for (const auto& [v, site] : ranked) {
    if (v < d.site_votes[d.site] / 4 || d.what_would_decide.size() >= 3) break;
    if (const auto it = site_checks().find(site); it != site_checks().end())
      d.what_would_decide.push_back(site + ": " + it->second);
  }
  if (d.candidates.size() > 1 && d.candidates[1].score >= 0.5 * d.candidates[0].score) {
    d.what_would_decide.push_back("the culprit is close between " + d.candidates[0].unit + " and " +
                                  d.candidates[1].unit +
                                  ": the kernel logs of both hosts and which one's "
                                  "ranks printed the first error would decide");
  }
}

void find_first_failure(Diagnosis& d) {
  const Evidence* first = nullptr;
  for (const Evidence& e : d.evidence) {
    if (e.role != "detection") continue;
    if (first == nullptr) {
      first = &e;
      continue;
    }
    // By time where both have one; a line with a time before one without (file position is no clock).
    if (e.time && (!first->time || *e.time < *first->time)) first = &e;
  }
  if (first != nullptr) d.first_failure = *first;
}

// A report or a combined log that quotes a rank's own line (indented, with no rank of its own) would
// count that line twice: a rankless line that a rank's log holds word for word is dropped.
void drop_quoted_lines(Diagnosis& d) {
  auto trimmed = [](const std::string& text) {
    const size_t start = text.find_first_not_of(" \t>");
    return start == std::string::npos ? std::string() : text.substr(start);
  };
  std::set<std::string> ranked;
  for (const Evidence& e : d.evidence)
    if (e.rank >= 0) ranked.insert(trimmed(e.text));
  const auto quoted = [&](const Evidence& e) { return e.rank < 0 && ranked.count(trimmed(e.text)) > 0; };
  d.quoted_lines_dropped = static_cast<size_t>(std::count_if(d.evidence.begin(), d.evidence.end(), quoted));
  d.evidence.erase(std::remove_if(d.evidence.begin(), d.evidence.end(), quoted), d.evidence.end());
}

// A slow ring runs at its slowest link's pace on every rank, so step times say nothing of where; but only
// the rank whose sends are held back (its port, or the path to the next rank, would not take the data)
// waits on its sends, and every other rank waits on its receives, for data that the held-back rank was
// late to pass on. ncclfi-cpu-ring's last line says both per rank. One rank waiting on its sends while
// every other waits on its receives, and itself waiting on its receives under half as long as the others'
// median, is the one that held the ring back: its port was congested.
void name_the_rank_that_held_the_ring_back(Analysis& a) {
  Diagnosis& d = a.d;
  int last = -1;
  for (const auto& [key, w] : a.ring_waits) last = std::max(last, key.first);
  std::map<int, const RingWaits*> ranks;
  for (const auto& [key, w] : a.ring_waits)
    if (key.first == last) ranks[key.second] = &w;
  if (ranks.size() < 2) return;
  int held = -1;
  std::vector<double> others_recv;
  for (const auto& [rank, w] : ranks) {
    if (w->send_s > w->recv_s && w->send_s >= kHeldBackMinS) {
      if (held >= 0) return;  // two ranks held back: no one place
      held = rank;
    } else if (w->recv_s > w->send_s) {
      others_recv.push_back(w->recv_s);
    } else {
      return;  // a rank that waited on neither: nothing was slow along the ring
    }
  }
  if (held < 0 || others_recv.size() + 1 != ranks.size()) return;
  const RingWaits& w = *ranks.at(held);
  const double others = harness::median(others_recv).value_or(0);
  if (w.recv_s >= others / 2) return;
  Evidence e = w.line;
  e.pattern = "workload.cpu_ring_waits";
  e.role = "evidence";
  e.label = "ring_waits";
  e.site = "congestion";
  e.rank = held;
  e.pointer = Pointer::kPrinter;
  d.evidence.push_back(e);
  d.culprit_ranks = {held};
  if (const auto it = d.rank_hosts.find(held); it != d.rank_hosts.end()) d.culprit_host = it->second;
  d.site = "congestion";
  char why[256];
  std::snprintf(why, sizeof(why),
                "rank %d waited %.3f s on its own sends and %.3f s on its receives, while the other %zu "
                "ranks waited on their receives (median %.3f s): its sends held the ring back",
                held, w.send_s, w.recv_s, others_recv.size(), others);
  d.site_why = why;
  d.candidates.push_back({a.unit_of(held, d.culprit_host), {held}, kPrinterDetectionWeight, {why}});
  d.what_would_decide = {"whether rank " + std::to_string(held) +
                         "'s port is congested by other traffic or its link is slow: its port counters "
                         "(`perfquery` PortXmitWait) and the per-link test (a link slow on its own is a "
                         "degraded link)"};
}

// The link test's findings are evidence on the rank each names: the link into it, or the path through it.
void add_link_test_findings(Analysis& a) {
  Diagnosis& d = a.d;
  for (const LinkFinding& f : judge_link_test(a.link_rows)) {
    if (d.evidence.size() >= kMaxEvidence) break;
    Evidence e = a.link_row_lines[f.row];
    e.pattern = f.kind == LinkFinding::Kind::kWrongData   ? "link_test.wrong_data"
                : f.kind == LinkFinding::Kind::kWrongRank ? "link_test.wrong_rank"
                : f.kind == LinkFinding::Kind::kSlowRank  ? "link_test.slow_rank"
                                                          : "link_test.slow_link";
    e.role = "evidence";
    e.label = "link_test";
    e.site = f.site;
    e.rank = f.rank;
    e.pointer = Pointer::kPrinter;
    d.evidence.push_back(std::move(e));
    d.link_test_findings.push_back(f.why);
    d.failure = true;
  }
}

}  // namespace

Pointer pointer_of(const std::string& id) {
  if (id == "torchrun.worker_failed" || id == "mpirun.noticed" || id == "srun.task_ended")
    return Pointer::kNamed;
  // A node's record of its own hardware (its kernel, the operator's tools run on it) is about that node.
  if (id == "cuda.gpu_fault" || harness::is_hardware_record(id)) return Pointer::kPrinter;
  const harness::SignatureLine* line = catalogue_line(id);
  if (line == nullptr) return Pointer::kNone;
  const std::string_view by = line->printed_by;
  if (contains(by, "either end")) return Pointer::kEitherEnd;
  if (contains(by, "kernel of") || contains(by, "the failing rank") || contains(by, "host of the failed") ||
      contains(by, "the process that asked"))
    return Pointer::kPrinter;
  if (contains(by, "peers") || contains(by, "the address is") || contains(by, "the lost one") ||
      contains(by, "could not reach"))
    return Pointer::kPeer;
  return Pointer::kNone;
}

Diagnosis diagnose(const InputSet& inputs) {
  Diagnosis d;
  d.skipped = inputs.skipped;
  Analysis a{d, {}, {}, {}, {}, nullptr, false, false, -1, -1, {}, 0, {}, {}, {}, {}, {}};
  const harness::LogClassifier classifier = harness::LogClassifier::builtin();
  learn_process_ranks(inputs, a);
  for (const InputFile& file : inputs.files) read_file(file, classifier, a);
  add_link_test_findings(a);
  // Lines with a rank but no host take the rank's host; lines with neither, a known host their file's
  // path names (node2/kern.log, node2-dmesg.txt).
  for (Evidence& e : d.evidence) {
    if (e.host.empty() && e.rank >= 0) {
      if (const auto it = d.rank_hosts.find(e.rank); it != d.rank_hosts.end()) e.host = it->second;
    }
    if (e.host.empty()) {
      for (const std::string& h : a.hosts)
        if (names_host(e.file, h)) e.host = h;
    }
  }
  drop_quoted_lines(d);
  // In time order where the lines have a time (a line without one after those with one), else in the
  // order the files were read.
  std::stable_sort(d.evidence.begin(), d.evidence.end(), [](const Evidence& x, const Evidence& y) {
    if (x.time && y.time) return *x.time < *y.time;
    return x.time.has_value() && !y.time.has_value();
  });
  if (!d.failure) {
    d.slow = slower_than_references(inputs);
    if (d.slow) {
      d.symptom = "slow with no error";
      d.what_would_decide = {
          "which link or rank is slow: the per-link test (`ncclfi-cpu-ring --mode linktest`, nccl-tests "
          "between pairs) and each node's port counters (`perfquery` PortXmitWait, `ethtool -S`) and PCIe "
          "link state"};
      name_the_rank_that_held_the_ring_back(a);
    }
    return d;
  }
  for (const Evidence& e : d.evidence) {
    if (e.pattern == "slurm.step_cancelled") a.step_cancelled = true;
    if (e.pattern == "srun.task_ended" && a.first_srun_line == nullptr) a.first_srun_line = &e;
    if (e.pattern == "srun.task_ended" && contains(e.text, "Exited with exit code"))
      a.srun_task_exited = true;
  }
  Scores s;
  score(a, s);
  choose_culprit(a, s);
  find_first_failure(d);
  vote_sites(d);
  recognise_flapping_link(a, d);
  recognise_missing_safety_net(d);
  decide_symptom(d);
  decide_confidence(d);
  return d;
}

}  // namespace ncclfi::diagnose
