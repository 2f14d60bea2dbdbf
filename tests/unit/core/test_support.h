// Shared helpers for the core unit tests: temporary directories, files and child processes.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "ncclfi/plan.h"

namespace ncclfi::test {

template <class A, class V>
struct VariantHolds : std::false_type {};
template <class A, class... Ts>
struct VariantHolds<A, std::variant<Ts...>> : std::bool_constant<(std::is_same_v<A, Ts> || ...)> {};

// The fault's action as alternative A of its layer's variant; std::bad_variant_access when it is not.
template <class A>
A action_as(const Fault& fault) {
  return std::visit(
      [](const auto& layer_action) -> A {
        if constexpr (VariantHolds<A, std::decay_t<decltype(layer_action)>>::value) {
          return std::get<A>(layer_action);
        } else {
          throw std::bad_variant_access();
        }
      },
      fault.action);
}

// A fresh directory under $TMPDIR, removed with its contents at scope exit.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "ncclfi-core-XXXXXX").string();
    char* made = ::mkdtemp(tmpl.data());
    path_ = made != nullptr ? std::string(made) : std::string();
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Runs `body` in a forked child; the child's exit status is body()'s return value (or 99 on an
// exception). Returns the child's pid.
inline pid_t spawn(const std::function<int()>& body) {
  pid_t pid = ::fork();
  if (pid == 0) {
    int code = 99;
    try {
      code = body();
    } catch (...) {
      code = 99;
    }
    ::_exit(code);
  }
  return pid;
}

// Waits for `pid`; returns its exit code, or 128 + signal when it was killed.
inline int wait_exit(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// Runs `body` in a child and returns its exit code: for tests that change the environment or global
// state (libfiu, Params::get()) without disturbing the test process.
inline int run_in_child(const std::function<int()>& body) {
  return wait_exit(spawn(body));
}

// A minimal valid fault object, to be edited by tests.
inline nlohmann::json fault_json(const std::string& id = "f0", const std::string& layer = "api",
                                 const std::string& kind = "error") {
  return {{"id", id}, {"layer", layer}, {"kind", kind}};
}

inline nlohmann::json plan_json(std::vector<nlohmann::json> faults) {
  return {{"seed", 7}, {"faults", faults}};
}

}  // namespace ncclfi::test
