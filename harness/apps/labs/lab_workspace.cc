#include "lab_workspace.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <sstream>
#include <stdexcept>

#include <csignal>
#include <cstring>
#include <ctime>

#include "lab_artefacts.h"
#include "ncclfi/bounded_input.h"
#include "ncclfi/event_log.h"

namespace ncclfi::cli::lab {
namespace fs = std::filesystem;

namespace {

void write_text(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    if (!out) throw std::runtime_error("cannot write " + path.string());
  }
  fs::rename(tmp, path);
}

// The wall-clock time of day, to the millisecond, as the harness saw a process end.
std::string time_of_day_ms(int64_t wall_ns) {
  const time_t t = static_cast<time_t>(wall_ns / 1000000000);
  std::tm local{};
  localtime_r(&t, &local);
  std::ostringstream out;
  out << std::put_time(&local, "%H:%M:%S") << "." << std::setw(3) << std::setfill('0')
      << (wall_ns / 1000000) % 1000;
  return out.str();
}

// The node each rank ran as (the job's launcher.hostnames; empty: the host's name the exit records).
std::vector<std::string> job_hostnames(const nlohmann::json& job) {
  const auto& launcher = job.at("scenario").value("launcher", nlohmann::json::object());
  return launcher.value("hostnames", std::vector<std::string>{});
}

std::string exit_text(const harness::RankExit& e) {
  std::ostringstream out;
  if (e.exit_code) out << "exit code " << *e.exit_code;
  if (e.signal) out << "killed by signal " << *e.signal;
  if (e.killed_by_harness) out << " (ended by the scheduler at the job's time limit)";
  return out.str();
}

// What srun prints on the submitting node as each task of the step ends (Slurm's format, one line per
// task in the order they ended), so that a lab's job reads like a Slurm job's stderr. A task the
// scheduler ended (time limit, the rest of a failed step) shows as Terminated: Slurm sends SIGTERM first.
std::string srun_line(const harness::RankExit& e, const std::string& host) {
  std::string status;
  if (e.killed_by_harness) {
    status = "Terminated";
  } else if (e.signal) {
    status = *e.signal == SIGKILL   ? "Killed"
             : *e.signal == SIGTERM ? "Terminated"
                                    : std::string(strsignal(*e.signal));
  } else if (e.exit_code && *e.exit_code != 0) {
    status = "Exited with exit code " + std::to_string(*e.exit_code);
  } else {
    return {};
  }
  return "srun: error: " + host + ": task " + std::to_string(e.rank) + ": " + status + "\n";
}

// The host as Slurm names a node: up to the first dot (this host's where the exit names none).
std::string short_host_name(const std::string& host) {
  const std::string full = host.empty() ? host_name() : host;
  return full.substr(0, full.find('.'));
}

// slurmstepd's line when the step ran into the job's time limit (Slurm's req.c), before srun's lines.
std::string slurm_time_limit_line(const harness::RankExit& last, int64_t end_ns) {
  const time_t when = static_cast<time_t>(end_ns / 1000000000);
  std::tm local{};
  localtime_r(&when, &local);
  std::ostringstream out;
  out << "slurmstepd: error: *** STEP 1.0 ON " << short_host_name(last.host) << " CANCELLED AT "
      << std::put_time(&local, "%Y-%m-%dT%H:%M:%S") << " DUE TO TIME LIMIT ***\n";
  return out.str();
}

// The lines an operator greps for first: warnings, errors, timeouts, NaN.
bool notable_line(const std::string& line) {
  static const char* const kWords[] = {"WARN",     "error", "Error", "timeout", "timed out",
                                       "watchdog", "wrong", "nan",   "NaN",     "failed"};
  return std::any_of(std::begin(kWords), std::end(kWords),
                     [&](const char* w) { return line.find(w) != std::string::npos; });
}

std::string job_description(const nlohmann::json& scenario) {
  std::ostringstream out;
  const auto& w = scenario.at("workload");
  out << "job: " << w.value("ranks", 1) << " ranks, one process per rank\n";
  out << "command: ";
  if (w.contains("builtin"))
    out << (w["builtin"] == "cpu-ring" ? "ncclfi-cpu-ring" : w["builtin"].get<std::string>());
  for (const auto& a : w.value("args", nlohmann::json::array())) out << " " << a.get<std::string>();
  out << "\nenvironment:\n";
  const nlohmann::json env = scenario.value("env", nlohmann::json::object());
  for (const auto& [k, v] : env.items()) {
    out << "  " << k << "=" << v.get<std::string>() << "\n";
  }
  out << "time limit: " << scenario.value("deadline_s", 60.0) << " s (the scheduler ends the job then)\n";
  if (scenario.contains("restart")) {
    out << "restarts: the scheduler relaunches a failed job up to " << scenario["restart"].value("max", 0)
        << " times\n";
  }
  return out.str();
}

void write_job(const fs::path& dir, const nlohmann::json& job, const harness::RunRecord& run) {
  const auto& h = run.history;
  const bool several = h.attempts > 1;
  std::map<std::pair<int, int>, std::vector<std::string>> notable;  // (attempt, rank) -> lines
  for (size_t a = 0; a < h.rank_logs.size(); ++a) {
    for (size_t r = 0; r < h.rank_logs[a].size(); ++r) {
      const fs::path src = fs::path(run.run_dir) / h.rank_logs[a][r];
      const fs::path dst =
          several ? dir / ("attempt-" + std::to_string(a)) / ("rank-" + std::to_string(r) + ".log")
                  : dir / ("rank-" + std::to_string(r) + ".log");
      std::string text;
      if (!read_regular_file(src.string(), 64ULL << 20, text).empty()) text.clear();
      write_text(dst, text);
      std::istringstream lines(text);
      for (std::string line; std::getline(lines, line);) {
        auto& list = notable[{static_cast<int>(a), static_cast<int>(r)}];
        if (notable_line(line) && list.size() < 3) list.push_back(line);
      }
    }
  }
  // Step timings: the workload's own per-step records (what a training script's logger keeps).
  std::ostringstream steps;
  steps << "attempt,rank,step,seconds_since_start,duration_ms\n";
  std::map<int, int64_t> first_ts;
  for (const auto& e : h.events) {
    if (e.event != "op" || e.rank < 0) continue;
    if (!first_ts.count(e.attempt)) first_ts[e.attempt] = e.ts_ns;
    steps << e.attempt << "," << e.rank << "," << e.fields.value("seq", -1) << "," << std::fixed
          << std::setprecision(3) << static_cast<double>(e.ts_ns - first_ts[e.attempt]) / 1e9 << ","
          << static_cast<double>(e.fields.value("dur_us", int64_t{0})) / 1000.0 << "\n";
  }
  write_text(dir / "step_times.csv", steps.str());
  std::ostringstream exits, srun;
  std::vector<harness::RankExit> ended = h.exits;
  std::stable_sort(ended.begin(), ended.end(),
                   [](const auto& a, const auto& b) { return a.ts_ns < b.ts_ns; });
  if (h.deadline_hit && !ended.empty()) srun << slurm_time_limit_line(ended.back(), h.end_ns);
  const std::vector<std::string> hostnames = job_hostnames(job);
  for (const auto& e : ended) {
    const std::string host = e.rank >= 0 && static_cast<size_t>(e.rank) < hostnames.size()
                                 ? hostnames[static_cast<size_t>(e.rank)]
                                 : short_host_name(e.host);
    exits << time_of_day_ms(e.ts_ns) << " "
          << (several ? "attempt " + std::to_string(e.attempt) + " " : std::string()) << "rank " << e.rank
          << " on " << host << ": " << exit_text(e) << ", " << std::fixed << std::setprecision(3)
          << static_cast<double>(e.ts_ns - h.start_ns) / 1e9 << " s after the job started\n";
    srun << srun_line(e, host);
  }
  write_text(dir / "exit_codes.txt", exits.str());
  write_text(dir / "srun.err", srun.str());
  write_text(dir / "job.txt", job_description(job.at("scenario")));
  std::ostringstream report;
  report << "# " << job.at("name").get<std::string>() << "\n\n"
         << job_description(job.at("scenario")) << "\n";
  report << "launches: " << h.attempts << "\n";
  report << "duration: " << std::fixed << std::setprecision(1)
         << static_cast<double>(h.end_ns - h.start_ns) / 1e9 << " s\n\n## Exit statuses\n\n"
         << exits.str() << "\n## First notable lines per rank\n\n";
  for (const auto& [where, lines] : notable) {
    if (lines.empty()) continue;
    report << (several ? "attempt " + std::to_string(where.first) + " " : std::string()) << "rank "
           << where.second << ":\n";
    for (const auto& l : lines) report << "    " << l << "\n";
  }
  write_text(dir / "report.md", report.str());
}

// The job's nodes in the order they first appear, each with its ranks in rank order.
std::vector<LabNode> job_nodes(const nlohmann::json& job) {
  std::vector<LabNode> nodes;
  const auto names = job_hostnames(job);
  for (size_t r = 0; r < names.size(); ++r) {
    auto node =
        std::find_if(nodes.begin(), nodes.end(), [&](const LabNode& n) { return n.host == names[r]; });
    if (node == nodes.end()) node = nodes.insert(nodes.end(), LabNode{names[r], {}});
    node->ranks.push_back(static_cast<int>(r));
  }
  return nodes;
}

// When the fault struck: the first injection the run's events record (the key's run directory), or 0.
int64_t first_injection_ns(const std::string& run_dir) {
  std::string text;
  if (!read_regular_file((fs::path(run_dir) / "events.jsonl").string(), 256ULL << 20, text).empty()) return 0;
  std::istringstream lines(text);
  int64_t first = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("\"event\":\"inject\"") == std::string::npos) continue;
    const auto doc = nlohmann::json::parse(line, nullptr, false);
    if (doc.is_discarded() || !doc.contains("ts_ns") || !doc["ts_ns"].is_number_integer()) continue;
    const int64_t at = doc["ts_ns"].get<int64_t>();
    if (first == 0 || at < first) first = at;
  }
  return first;
}

// The truth the node files show: the drawn cause's `site` (the one its key and the score hold), else the
// answer's cause's.
FaultTruth truth_of(const LabVariant& variant, const harness::RunRecord& run) {
  FaultTruth truth;
  const auto& answer = variant.answer;
  truth.site =
      is_fault_site(variant.site) ? variant.site : site_for_cause(answer.value("cause", std::string("none")));
  if (answer.contains("ranks") && answer["ranks"].is_array()) {
    for (const auto& r : answer["ranks"]) {
      if (r.is_number_integer()) truth.ranks.insert(r.get<int>());
    }
  }
  if (answer.contains("strength") && answer["strength"].is_number())
    truth.strength = answer["strength"].get<double>();
  truth.at_ns = first_injection_ns(run.run_dir);
  return truth;
}

}  // namespace

void write_json_atomically(const std::string& path, const nlohmann::json& doc) {
  write_text(path, doc.dump(2) + "\n");
}

void write_file_atomically(const std::string& path, const std::string& text) {
  write_text(path, text);
}

Ticket read_ticket(const std::string& workspace) {
  std::string text;
  const std::string path = (fs::path(workspace) / "lab.json").string();
  if (const std::string error = read_regular_file(path, 1 << 20, text); !error.empty()) {
    throw std::runtime_error(workspace + ": not a lab workspace (" + error + ")");
  }
  const auto doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) throw std::runtime_error(path + ": not valid JSON");
  Ticket t;
  t.lab = doc.value("lab", "");
  t.student = doc.value("student", "");
  t.ticket_id = doc.value("ticket", "");
  // lab start's ids are hex; anything else ("../grace-ticket", "") would name another directory.
  if (t.ticket_id.empty() || t.ticket_id.size() > 64 ||
      t.ticket_id.find_first_not_of("0123456789abcdef") != std::string::npos) {
    throw std::runtime_error(path + ": \"ticket\" is not a ticket id");
  }
  t.key_dir = doc.value("key_dir", "");
  t.started_ns = doc.value("started_ns", int64_t{0});
  t.server = doc.contains("server") && doc["server"].is_string() ? doc["server"].get<std::string>() : "";
  return t;
}

std::string key_path(const Ticket& ticket, const std::string& key_dir_override) {
  return (fs::path(key_dir_override.empty() ? ticket.key_dir : key_dir_override) / ticket.ticket_id).string();
}

nlohmann::json read_key(const std::string& key_path) {
  std::string text;
  const std::string path = (fs::path(key_path) / "key.json").string();
  if (const std::string error = read_regular_file(path, 16 << 20, text); !error.empty()) {
    throw std::runtime_error("no key for this workspace at " + path + " (" + error + ")");
  }
  auto doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded()) throw std::runtime_error(path + ": not valid JSON");
  return doc;
}

void write_workspace(const std::string& workspace, const Lab& lab, const LabVariant& variant,
                     const std::vector<harness::RunRecord>& runs, const Ticket& ticket,
                     const std::string& shown_as) {
  const fs::path ws(workspace);
  fs::create_directories(ws);
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& job = variant.jobs.at(i);
    write_job(ws / job.at("name").get<std::string>(), job, runs[i]);
  }
  // What the operator's tools show on each node (lab_artefacts.h), after the first job: the nodes and the
  // fault are the same for every job of a lab.
  std::map<std::string, std::string> node_files;
  if (!runs.empty()) {
    node_files = node_artefacts(job_nodes(variant.jobs.at(0)), truth_of(variant, runs[0]),
                                runs[0].history.start_ns, runs[0].history.end_ns);
  }
  for (const auto& [path, text] : node_files) write_text(ws / path, text);
  std::ostringstream brief;
  brief << "# " << lab.title << "\n\n"
        << "Topic: " << lab.topic << ". Difficulty: " << lab.difficulty << "/3.\n\n"
        << "## What happened\n\n"
        << lab.symptom << "\n\n"
        << lab.doc.at("briefing").get<std::string>() << "\n\n"
        << "## What you have\n\n";
  for (const auto& job : variant.jobs) {
    brief << "- `" << job.at("name").get<std::string>()
          << "/`: " << job.value("about", std::string("a run of the job"))
          << " (each rank's log, `step_times.csv`, `exit_codes.txt`, `srun.err`, `job.txt`, `report.md`)\n";
  }
  if (!node_files.empty())
    brief << "- `nodes/<host>/`: what the operator's tools showed on each node after the job (`ibstat.txt`, "
             "`perfquery.txt`, `dmesg.txt` as `dmesg -T` prints it, `nvidia-smi-q.txt`, "
             "`nvidia-smi-nvlink.txt`, `lspci-vv.txt`)\n";
  brief << "\n## Your answer\n\n"
        << "    ncclfi lab answer " << shown_as << " --rank R [--rank R2] --cause CAUSE [--detail K=V]\n"
        << "    ncclfi lab hint " << shown_as << "       (each hint costs points)\n"
        << "    ncclfi lab causes                          (the words for CAUSE)\n";
  write_text(ws / "BRIEFING.md", brief.str());
  nlohmann::json lab_json = {{"lab", ticket.lab},
                             {"student", ticket.student},
                             {"ticket", ticket.ticket_id},
                             {"key_dir", ticket.key_dir},
                             {"started_ns", ticket.started_ns}};
  if (!ticket.server.empty()) lab_json["server"] = ticket.server;
  write_json_atomically((ws / "lab.json").string(), lab_json);
}

}  // namespace ncclfi::cli::lab
