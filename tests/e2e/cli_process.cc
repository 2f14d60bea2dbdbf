#include "cli_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace ncclfi::e2e {
namespace fs = std::filesystem;

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

pid_t spawn(const std::vector<std::string>& argv, const std::string& out, const std::string& err,
            const std::string& cwd) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(126);
    const int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = err == out ? o : open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(o, 1);
    dup2(e, 2);
    const int null = open("/dev/null", O_RDONLY);
    dup2(null, 0);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  return pid;
}

}  // namespace

int wait_pid(pid_t pid, double timeout_s) {
  const double end = now_s() + timeout_s;
  int status = 0;
  while (now_s() < end) {
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -1;
}

CliResult run_program(const std::vector<std::string>& argv, double timeout_s, const std::string& cwd) {
  TempDir tmp;
  const std::string out = tmp.path + "/out", err = tmp.path + "/err";
  CliResult result;
  const double start = now_s();
  const pid_t pid = spawn(argv, out, err, cwd);
  const int status = wait_pid(pid, timeout_s);
  result.seconds = now_s() - start;
  if (status == -1) {
    result.timed_out = true;
  } else if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  result.out = read_text(out);
  result.err = read_text(err);
  return result;
}

CliResult run_cli(const std::vector<std::string>& args, double timeout_s, const std::string& cwd) {
  std::vector<std::string> argv{NCCLFI_CLI};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_program(argv, timeout_s, cwd);
}

pid_t start_cli(const std::vector<std::string>& args, const std::string& out_file, const std::string& cwd) {
  std::vector<std::string> argv{NCCLFI_CLI};
  argv.insert(argv.end(), args.begin(), args.end());
  return spawn(argv, out_file, out_file, cwd);
}

TempDir::TempDir() {
  std::string pattern = (fs::temp_directory_path() / "ncclfi-e2e-XXXXXX").string();
  path = mkdtemp(pattern.data()) != nullptr ? pattern : "/tmp";
}
TempDir::~TempDir() {
  std::error_code ec;
  if (std::getenv("NCCLFI_KEEP_TEST_DIRS") == nullptr) fs::remove_all(path, ec);
}

std::string write_scenario(const std::string& dir, const nlohmann::json& scenario) {
  const std::string path = dir + "/" + scenario["name"].get<std::string>() + ".json";
  std::ofstream(path) << scenario.dump(2);
  return path;
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

bool contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool file_exists(const std::string& path) {
  return fs::exists(path);
}

bool process_alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return false;
  std::string text;
  std::getline(stat, text);
  const auto close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z';
}

bool wait_for_file(const std::string& path, double timeout_s) {
  const double end = now_s() + timeout_s;
  while (now_s() < end) {
    if (fs::exists(path) && fs::file_size(path) > 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

pid_t wait_for_pid_file(const std::string& path, double timeout_s) {
  const double end = now_s() + timeout_s;
  while (now_s() < end) {
    const std::string text = read_text(path);
    if (!text.empty() && text.back() == '\n') return static_cast<pid_t>(std::stol(text));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return 0;
}

nlohmann::json shell_scenario(const std::string& name, int ranks, const std::string& shell,
                              const nlohmann::json& expect, double deadline_s) {
  return {{"name", name},
          {"summary", "e2e test scenario"},
          {"tags", {"e2e"}},
          {"workload", {{"command", {"/bin/sh", "-c", shell}}, {"ranks", ranks}}},
          {"launcher", {{"kind", "command"}}},
          {"baseline", false},
          {"deadline_s", deadline_s},
          {"grace_s", 1},
          {"expect", expect}};
}

}  // namespace ncclfi::e2e
