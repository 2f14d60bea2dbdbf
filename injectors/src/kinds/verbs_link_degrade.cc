// verbs link_degrade: ibv_query_port reports a slower or narrower link from the firing on.
#include <array>

#include "kind_support.h"
#include "ncclfi/ib_verbs_codes.h"

namespace ncclfi::kinds {
namespace {

template <size_t N>
constexpr std::array<std::string_view, N> names_of(const std::array<ib::LinkCode, N>& table) {
  std::array<std::string_view, N> names{};
  for (size_t i = 0; i < N; ++i) names[i] = table[i].name;
  return names;
}
constexpr auto kSpeedNames = names_of(ib::kLinkSpeeds);
constexpr auto kWidthNames = names_of(ib::kLinkWidths);

template <size_t N>
int code_of(const std::array<ib::LinkCode, N>& table, const std::string& name) {
  for (const auto& e : table) {
    if (e.name == name) return e.code;
  }
  return 0;
}

constexpr ParamSpec kParams[] = {
    {.name = "speed",
     .type = ParamType::kChoice,
     .absent = "unchanged",
     .meaning = "the active_speed reported (per-lane rate)",
     .choices = kSpeedNames},
    {.name = "width",
     .type = ParamType::kChoice,
     .default_json = R"("1x")",
     .meaning = "the active_width reported (lanes); to change the speed alone, give the real width",
     .choices = kWidthNames}};

FaultAction resolve(const ParamReader& p) {
  LinkDegrade d;
  if (p.has("speed")) d.speed_code = code_of(ib::kLinkSpeeds, p.choice("speed"));
  d.width_code = code_of(ib::kLinkWidths, p.choice("width"));
  return VerbsAction{d};
}

}  // namespace

extern const FaultKindSpec kVerbsLinkDegrade;
constinit const FaultKindSpec kVerbsLinkDegrade{
    Layer::kVerbs,
    "link_degrade",
    "ibv_query_port reports the lower active_speed/active_width from then on",
    kVerbsQueryPort,
    kParams,
    resolve};

}  // namespace ncclfi::kinds
