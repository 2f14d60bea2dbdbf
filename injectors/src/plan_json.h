// Small helpers shared by the plan parser's files: typed field readers that throw PlanError with the
// file, the JSON pointer and the expectation.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "ncclfi/plan.h"

namespace ncclfi::plan_json {

struct Where {
  const std::string& file;
  std::string pointer;
  // '~' and '/' in the key escaped as RFC 6901 says (nlohmann's json_pointer does it).
  Where at(std::string_view key) const {
    return Where{file, pointer + (nlohmann::json::json_pointer() / std::string(key)).to_string()};
  }
  Where at(size_t index) const { return Where{file, pointer + "/" + std::to_string(index)}; }
  [[noreturn]] void fail(const std::string& expected, const nlohmann::json& found) const {
    throw PlanError(file, pointer.empty() ? "/" : pointer, expected, describe_json(found));
  }
  [[noreturn]] void fail_text(const std::string& expected, const std::string& found) const {
    throw PlanError(file, pointer.empty() ? "/" : pointer, expected, found);
  }
};

void require_object(const nlohmann::json& v, const Where& w, std::initializer_list<std::string_view> allowed);
uint64_t read_positive_int(const nlohmann::json& v, const Where& w);
uint64_t read_nonneg_int(const nlohmann::json& v, const Where& w);
double read_nonneg_number(const nlohmann::json& v, const Where& w);
double read_positive_number(const nlohmann::json& v, const Where& w);
bool read_bool(const nlohmann::json& v, const Where& w);
std::string read_string(const nlohmann::json& v, const Where& w);

}  // namespace ncclfi::plan_json
