// Runs the ncclfi CLI (or any program) as a child for e2e tests: captured output, exit status, a
// deadline that turns a hang into a test failure, and helpers to write scenarios and read results.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ncclfi::e2e {

struct CliResult {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  bool timed_out = false;
  double seconds = 0;
  std::string out, err;
};

// Runs `argv` (argv[0] a path), waits at most `timeout_s`, then SIGKILLs it.
CliResult run_program(const std::vector<std::string>& argv, double timeout_s = 60,
                      const std::string& cwd = "");
// Runs build/bin/ncclfi with `args`.
CliResult run_cli(const std::vector<std::string>& args, double timeout_s = 60, const std::string& cwd = "");
// Starts ncclfi in the background; returns its pid (output to `out_file`).
pid_t start_cli(const std::vector<std::string>& args, const std::string& out_file,
                const std::string& cwd = "");
// Waits for `pid`, at most `timeout_s`; returns its raw wait status, or -1 on timeout (then kills it).
int wait_pid(pid_t pid, double timeout_s);

// A fresh temporary directory (removed by the caller's TempDir).
struct TempDir {
  TempDir();
  ~TempDir();
  std::string path;
};

std::string write_scenario(const std::string& dir, const nlohmann::json& scenario);
nlohmann::json read_json(const std::string& path);
std::string read_text(const std::string& path);
// Whether `needle` occurs in `text` (what most CLI tests assert of an output).
bool contains(const std::string& text, const std::string& needle);
bool file_exists(const std::string& path);
// True while `pid` exists and is not a zombie.
bool process_alive(pid_t pid);
// Waits until `path` exists and is not empty (true) or `timeout_s` passes (false).
bool wait_for_file(const std::string& path, double timeout_s);
// Waits until `path` holds a whole line with a process id (`echo $$ > path`, written by another
// process), then returns it; 0 when `timeout_s` passed first.
pid_t wait_for_pid_file(const std::string& path, double timeout_s);
// A scenario running `shell` (sh -c) per rank through the command launcher.
nlohmann::json shell_scenario(const std::string& name, int ranks, const std::string& shell,
                              const nlohmann::json& expect, double deadline_s = 20);

}  // namespace ncclfi::e2e
