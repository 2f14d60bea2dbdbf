// Whether a run may be controlled (run_control.h).
#include "run_control.h"

#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "ncclfi/bounded_input.h"
#include "ncclfi/event_log.h"

namespace ncclfi::cli {
namespace fs = std::filesystem;
namespace {

std::string user_name(uid_t uid) {
  const passwd* pw = ::getpwuid(uid);
  return (pw != nullptr ? std::string(pw->pw_name) : "uid") + " (uid " + std::to_string(uid) + ")";
}

// When `pid` started, in seconds since the epoch (/proc/PID/stat's start time after boot plus the boot
// time); 0 when unknown.
double process_start_s(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  std::getline(stat, text);            // one line
  const auto close = text.rfind(')');  // the command name may hold spaces and parentheses
  if (close == std::string::npos) return 0;
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
    if (i != 22) continue;
    std::ifstream boot("/proc/stat");
    for (std::string key; boot >> key;) {
      if (key == "btime") {
        double btime = 0;
        boot >> btime;
        return btime + std::stod(field) / static_cast<double>(::sysconf(_SC_CLK_TCK));
      }
    }
  }
  return 0;
}

// The harness that wrote the record at `written_s` is alive: its pid exists and was not reused by a
// process started after the record (a second of slack for the clocks' rounding).
bool harness_alive(int pid, double written_s) {
  if (pid <= 0 || (::kill(pid, 0) != 0 && errno != EPERM)) return false;
  const double started = process_start_s(pid);
  return started == 0 || started <= written_s + 1;
}

// A record's field when it has the expected type: an edited harness.json whose pid is a string reads as
// no pid, never as the library's type_error.
int int_or(const nlohmann::json& record, const char* key, int fallback) {
  const auto it = record.find(key);
  if (it == record.end() || !it->is_number_integer()) return fallback;
  const auto value = it->get<int64_t>();
  return value > 0 && value < (int64_t{1} << 31) ? static_cast<int>(value) : fallback;
}

std::string text_or(const nlohmann::json& record, const char* key) {
  const auto it = record.find(key);
  return it != record.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Whether `pid` has a file descriptor open on the file `target` is (same device and inode).
bool holds_open(int pid, const struct stat& target) {
  std::error_code ec;
  for (fs::directory_iterator it("/proc/" + std::to_string(pid) + "/fd", ec), end; !ec && it != end;
       it.increment(ec)) {
    struct stat st {};
    if (::stat(it->path().c_str(), &st) == 0 && st.st_dev == target.st_dev && st.st_ino == target.st_ino)
      return true;
  }
  return false;
}

}  // namespace

std::string process_start_ticks(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  std::getline(stat, text);
  const auto close = text.rfind(')');  // the command name may hold spaces and parentheses
  if (close == std::string::npos || close + 2 > text.size()) return "";
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i)
    if (i == 22) return field;
  return "";
}

std::string harness_identity_problem(const std::string& run_dir, const RunControlState& state) {
  const std::string proc = "/proc/" + std::to_string(state.harness_pid);
  struct stat owner {};
  if (::stat(proc.c_str(), &owner) != 0) return "it is gone";
  if (owner.st_uid != ::geteuid()) return "it runs as " + user_name(owner.st_uid);
  std::error_code ec;
  std::string exe = fs::read_symlink(proc + "/exe", ec).filename().string();
  if (const auto deleted = exe.find(" (deleted)"); deleted != std::string::npos) exe.resize(deleted);
  if (ec || exe != "ncclfi") return "it is not an ncclfi program (" + (ec ? ec.message() : exe) + ")";
  const std::string started = process_start_ticks(state.harness_pid);
  if (state.start_ticks.empty() || state.start_ticks != started)
    return "it did not start when the record says (start time " + started + ", the record's " +
           (state.start_ticks.empty() ? "none" : state.start_ticks) + ")";
  struct stat record {};
  if (::stat((run_dir + "/harness.json").c_str(), &record) != 0 || !holds_open(state.harness_pid, record))
    return "it does not hold this run's harness.json open";
  return "";
}

RunControlState run_control_state(const std::string& run_dir) {
  using Kind = RunControlState::Kind;
  RunControlState state;
  const std::string record_path = run_dir + "/harness.json";
  std::string text;
  struct stat st {};
  const auto record = read_regular_file(record_path, kMaxInputFileBytes, text).empty()
                          ? nlohmann::json::parse(text, nullptr, false)
                          : nlohmann::json();
  if (!record.is_object() || ::stat(record_path.c_str(), &st) != 0) {
    state.why = run_dir + " has no harness record (harness.json): its job never started here";
    return state;
  }
  state.harness_pid = int_or(record, "pid", 0);
  state.harness_id = text_or(record, "harness_id");
  state.start_ticks = text_or(record, "start_ticks");
  const std::string host = text_or(record, "host");
  if (st.st_uid != ::geteuid()) {
    state.kind = Kind::kOtherUser;
    state.why = run_dir + " is a run of " + user_name(st.st_uid) + ", not of " + user_name(::geteuid()) +
                ": only its owner may control it";
  } else if (::access((run_dir + "/verdict.json").c_str(), F_OK) == 0) {
    state.kind = Kind::kFinished;
    state.why = run_dir + " has finished (its verdict.json is written): there is no job to control";
  } else if (host != host_name()) {
    state.kind = Kind::kOtherHost;
    state.why =
        "the harness of " + run_dir + " runs on " + host + ", not on " + host_name() + ": run this there";
  } else if (!harness_alive(state.harness_pid, static_cast<double>(st.st_mtim.tv_sec))) {
    state.kind = Kind::kGone;
    state.why = "the harness of " + run_dir + " (pid " + std::to_string(state.harness_pid) +
                ") is gone: the run is over";
  } else {
    state.kind = Kind::kRunning;
  }
  return state;
}

}  // namespace ncclfi::cli
