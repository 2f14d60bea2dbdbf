// api corrupt: `count` elements of the receive buffer are altered on the op's stream after the op.
#include "kind_support.h"

namespace ncclfi::kinds {
namespace {

constexpr std::string_view kModes[] = {"bitflip", "nan", "zero"};

CorruptMode mode_of(const std::string& mode) {
  if (mode == "nan") return CorruptMode::kNan;
  if (mode == "zero") return CorruptMode::kZero;
  return CorruptMode::kBitflip;
}

constexpr ParamSpec kParams[] = {{.name = "mode",
                                  .type = ParamType::kChoice,
                                  .default_json = R"("bitflip")",
                                  .meaning = "bitflip: the top exponent bit flips; nan: a quiet NaN "
                                             "(integers: all bits set); zero: all bits cleared",
                                  .choices = kModes},
                                 {.name = "count",
                                  .type = ParamType::kPositiveInt,
                                  .default_json = R"(1)",
                                  .meaning = "elements altered, evenly spaced"},
                                 {.name = "seed",
                                  .type = ParamType::kNonNegInt,
                                  .absent = "the trigger's seed, else the plan's",
                                  .meaning = "which elements: same seed, same elements"}};

FaultAction resolve(const ParamReader& p) {
  return ApiAction{
      CorruptElements{mode_of(p.choice("mode")), p.integer("count"), p.optional_integer("seed")}};
}

}  // namespace

extern const FaultKindSpec kApiCorrupt;
constinit const FaultKindSpec kApiCorrupt{
    Layer::kApi,
    "corrupt",
    "`count` elements of the receive buffer are altered on the op's stream after the op",
    kApiReceivingOps,
    kParams,
    resolve};

}  // namespace ncclfi::kinds
