#include "ncclfi/nccl_results.h"

namespace ncclfi {

std::optional<NcclError> nccl_error_from_name(std::string_view name) {
  for (const auto& e : kNcclErrors) {
    if (e.name == name) return e.code;
  }
  return std::nullopt;
}

std::optional<NcclError> nccl_error_from_int(long long value) {
  for (const auto& e : kNcclErrors) {
    if (to_int(e.code) == value) return e.code;
  }
  return std::nullopt;
}

std::string_view name_of(NcclError code) {
  for (const auto& e : kNcclErrors) {
    if (e.code == code) return e.name;
  }
  return "ncclUnknownError";
}

}  // namespace ncclfi
