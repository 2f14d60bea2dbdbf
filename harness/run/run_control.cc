// Whether a run may be controlled (run_control.h).
#include "run_control.h"

#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "ncclfi/bounded_input.h"
#include "ncclfi/event_log.h"

namespace ncclfi::cli {
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

}  // namespace

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
  state.harness_pid = record.value("pid", 0);
  state.harness_id = record.value("harness_id", std::string());
  const std::string host = record.value("host", std::string());
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
