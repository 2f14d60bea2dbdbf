// api bootstrap_unreachable: the rank cannot reach its job's bootstrap. Its connect() to NCCL's bootstrap
// root or to the job's rendezvous fails with the errno, as a firewall's reject (ECONNREFUSED), a wrong
// interface or route (EHOSTUNREACH, ENETUNREACH) or a dropped SYN (ETIMEDOUT) makes it fail. The caller
// sees it as the real failure: NCCL retries and logs it in its own words (misc/socket.cc), then gives up.
#include <array>
#include <cerrno>
#include <iterator>

#include "kind_support.h"

namespace ncclfi::kinds {
namespace {

struct ErrnoName {
  std::string_view name;
  int value;
};
constexpr ErrnoName kErrnos[] = {{"ECONNREFUSED", ECONNREFUSED},
                                 {"ETIMEDOUT", ETIMEDOUT},
                                 {"EHOSTUNREACH", EHOSTUNREACH},
                                 {"ENETUNREACH", ENETUNREACH}};
constexpr auto kErrnoNames = [] {
  std::array<std::string_view, std::size(kErrnos)> names{};
  for (size_t i = 0; i < names.size(); ++i) names[i] = kErrnos[i].name;
  return names;
}();

constexpr std::string_view kPoints[] = {points::kBootstrapRoot, points::kBootstrapRendezvous};

constexpr ParamSpec kParams[] = {
    {.name = "errno",
     .type = ParamType::kChoice,
     .default_json = R"("ECONNREFUSED")",
     .meaning = "how connect() fails: ECONNREFUSED (a reject), ETIMEDOUT (no answer), EHOSTUNREACH or "
                "ENETUNREACH (no route)",
     .choices = kErrnoNames}};

FaultAction resolve(const ParamReader& p) {
  const std::string name = p.choice("errno");
  for (const auto& e : kErrnos) {
    if (e.name == name) return ApiAction{RefuseConnect{e.value}};
  }
  return ApiAction{RefuseConnect{ECONNREFUSED}};
}

}  // namespace

extern const FaultKindSpec kApiBootstrapUnreachable;
constinit const FaultKindSpec kApiBootstrapUnreachable{
    Layer::kApi,
    "bootstrap_unreachable",
    "the rank's connect() to NCCL's bootstrap root (op root) or to the job's rendezvous, "
    "MASTER_ADDR:MASTER_PORT "
    "(op rendezvous), fails with the errno; the caller retries and reports it as the real failure",
    kPoints,
    kParams,
    resolve};

}  // namespace ncclfi::kinds
