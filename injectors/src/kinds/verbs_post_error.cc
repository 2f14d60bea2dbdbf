// verbs post_error: ibv_post_send/ibv_post_recv fail with an errno and post nothing.
#include <array>

#include "kind_support.h"
#include "ncclfi/ib_verbs_codes.h"

namespace ncclfi::kinds {
namespace {

constexpr auto kErrnoNames = [] {
  std::array<std::string_view, ib::kPostErrnos.size()> names{};
  for (size_t i = 0; i < names.size(); ++i) names[i] = ib::kPostErrnos[i].name;
  return names;
}();

constexpr std::string_view kPostPoints[] = {points::kVerbsPostSend, points::kVerbsPostRecv};

constexpr ParamSpec kParams[] = {{.name = "errno",
                                  .type = ParamType::kChoice,
                                  .default_json = R"("ENOMEM")",
                                  .meaning = "the errno returned (ENOMEM: the queue is full)",
                                  .choices = kErrnoNames}};

FaultAction resolve(const ParamReader& p) {
  return VerbsAction{PostError{ib::code_of(ib::kPostErrnos, p.choice("errno")).value_or(ENOMEM)}};
}

}  // namespace

extern const FaultKindSpec kVerbsPostError;
constinit const FaultKindSpec kVerbsPostError{
    Layer::kVerbs,
    "post_error",
    "ibv_post_send/ibv_post_recv return the errno, *bad_wr = the first WR, nothing posted",
    kPostPoints,
    kParams,
    resolve};

}  // namespace ncclfi::kinds
