#include "plan_json.h"

#include <cmath>
#include <limits>

namespace ncclfi::plan_json {

void require_object(const nlohmann::json& v, const Where& w,
                    std::initializer_list<std::string_view> allowed) {
  if (!v.is_object()) w.fail("an object", v);
  for (const auto& [key, value] : v.items()) {
    bool known = false;
    for (auto a : allowed) known = known || (a == key);
    if (!known) {
      std::string list;
      for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      w.at(key).fail_text("no such key (allowed: " + list + ")", "\"" + key + "\"");
    }
  }
}

uint64_t read_positive_int(const nlohmann::json& v, const Where& w) {
  if (v.is_number_unsigned() && v.get<uint64_t>() > 0) return v.get<uint64_t>();
  if (v.is_number_integer() && v.get<int64_t>() > 0) return static_cast<uint64_t>(v.get<int64_t>());
  w.fail("a positive integer", v);
}

uint64_t read_nonneg_int(const nlohmann::json& v, const Where& w) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer() && v.get<int64_t>() >= 0) return static_cast<uint64_t>(v.get<int64_t>());
  w.fail("a non-negative integer", v);
}

double read_nonneg_number(const nlohmann::json& v, const Where& w) {
  if (v.is_number()) {
    double d = v.get<double>();
    if (std::isfinite(d) && d >= 0) return d;
  }
  w.fail("a non-negative number", v);
}

double read_positive_number(const nlohmann::json& v, const Where& w) {
  if (v.is_number()) {
    double d = v.get<double>();
    if (std::isfinite(d) && d > 0) return d;
  }
  w.fail("a positive number", v);
}

bool read_bool(const nlohmann::json& v, const Where& w) {
  if (!v.is_boolean()) w.fail("true or false", v);
  return v.get<bool>();
}

std::string read_string(const nlohmann::json& v, const Where& w) {
  if (!v.is_string()) w.fail("a string", v);
  return v.get<std::string>();
}

}  // namespace ncclfi::plan_json
