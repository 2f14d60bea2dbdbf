#include "nccl_codes.h"

#include <algorithm>
#include <cctype>
#include <csignal>
#include <string>
#include <string_view>

namespace ncclfi::preload {
namespace {

std::string normalise(std::string s) {
  // "ncclRemoteError", "RemoteError", "remote_error" and "remote" all become "remote".
  std::string out;
  for (char c : s) {
    if (c != '_' && c != '-') out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  if (out.rfind("nccl", 0) == 0) out.erase(0, 4);
  if (out.size() > 5 && out.compare(out.size() - 5, 5, "error") == 0) out.erase(out.size() - 5);
  return out;
}

}  // namespace

ncclResult_t parse_nccl_code(const nlohmann::json& params, ncclResult_t fallback) {
  if (!params.is_object() || !params.contains("code")) return fallback;
  const auto& code = params["code"];
  if (code.is_number_integer()) {
    auto v = code.get<int64_t>();
    return v >= 0 && v <= 8 ? static_cast<ncclResult_t>(v) : fallback;
  }
  if (!code.is_string()) return fallback;
  struct Named {
    std::string_view name;
    ncclResult_t code;
  };
  static constexpr Named kNames[] = {{"success", ncclSuccess},
                                     {"unhandledcuda", ncclUnhandledCudaError},
                                     {"system", ncclSystemError},
                                     {"internal", ncclInternalError},
                                     {"invalidargument", ncclInvalidArgument},
                                     {"invalidusage", ncclInvalidUsage},
                                     {"remote", ncclRemoteError},
                                     {"inprogress", ncclInProgress}};
  std::string n = normalise(code.get<std::string>());
  for (const auto& named : kNames) {
    if (n == named.name) return named.code;
  }
  return fallback;
}

int parse_signal(const nlohmann::json& params, int fallback) {
  if (!params.is_object() || !params.contains("signal")) return fallback;
  const auto& sig = params["signal"];
  if (sig.is_number_integer()) {
    auto v = sig.get<int64_t>();
    return v > 0 && v < 65 ? static_cast<int>(v) : fallback;
  }
  if (!sig.is_string()) return fallback;
  std::string s = sig.get<std::string>();
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  if (s.rfind("SIG", 0) == 0) s.erase(0, 3);
  struct Named {
    std::string_view name;
    int sig;
  };
  static constexpr Named kSignals[] = {{"KILL", SIGKILL}, {"ABRT", SIGABRT}, {"SEGV", SIGSEGV},
                                       {"TERM", SIGTERM}, {"INT", SIGINT},   {"BUS", SIGBUS},
                                       {"FPE", SIGFPE},   {"ILL", SIGILL},   {"QUIT", SIGQUIT},
                                       {"HUP", SIGHUP},   {"USR1", SIGUSR1}, {"USR2", SIGUSR2}};
  for (const auto& named : kSignals) {
    if (s == named.name) return named.sig;
  }
  if (!s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); })) {
    int v = std::stoi(s);
    return v > 0 && v < 65 ? v : fallback;
  }
  return fallback;
}

}  // namespace ncclfi::preload
