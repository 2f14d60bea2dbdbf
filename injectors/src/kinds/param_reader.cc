// Parameter validation and typed reading for the fault kinds: the one place that knows what each
// ParamType accepts.
#include <stdexcept>

#include "kind_support.h"
#include "ncclfi/signals.h"

namespace ncclfi::kinds {
namespace {

std::string code_expectation() {
  std::string names;
  for (const auto& e : kNcclErrors) names += (names.empty() ? "" : ", ") + std::string(e.name);
  return "an NCCL error code: " + std::to_string(to_int(kNcclErrors[0].code)) + "-" +
         std::to_string(to_int(std::end(kNcclErrors)[-1].code)) + " or its name (" + names + ")";
}

const std::string kSignalExpectation =
    "a signal whose default action ends the process (a name such as \"SIGKILL\" or a number; "
    "`ncclfi list faults` lists them)";

void check_code(const nlohmann::json& v, const plan_json::Where& w) {
  if (v.is_number_integer() && nccl_error_from_int(v.get<long long>())) return;
  if (v.is_string() && nccl_error_from_name(v.get<std::string>())) return;
  w.fail(code_expectation(), v);
}

void check_signal(const nlohmann::json& v, const plan_json::Where& w) {
  SignalLookup found;
  if (v.is_number_integer()) {
    found = signal_from_int(v.get<long long>());
  } else if (v.is_string()) {
    found = signal_from_name(v.get<std::string>());
  }
  if (found.number) return;
  if (!found.refusal.empty())
    w.fail("a signal whose default action ends the process (" + found.refusal + ")", v);
  w.fail(kSignalExpectation, v);
}

void check_value(const ParamSpec& spec, const nlohmann::json& v, const plan_json::Where& w) {
  switch (spec.type) {
    case ParamType::kNonNegInt:
      plan_json::read_nonneg_int(v, w);
      return;
    case ParamType::kPositiveInt:
      plan_json::read_positive_int(v, w);
      return;
    case ParamType::kNonNegNumber:
      plan_json::read_nonneg_number(v, w);
      return;
    case ParamType::kPositiveNumber:
      plan_json::read_positive_number(v, w);
      return;
    case ParamType::kChoice: {
      const std::string s = plan_json::read_string(v, w);
      std::string list;
      for (auto c : spec.choices) {
        if (c == s) return;
        list += (list.empty() ? "" : ", ") + std::string(c);
      }
      w.fail("one of " + list, v);
    }
    case ParamType::kNcclError:
      check_code(v, w);
      return;
    case ParamType::kSignal:
      check_signal(v, w);
      return;
    case ParamType::kExitCode:
      if (v.is_number_integer() && v.get<long long>() >= 0 && v.get<long long>() <= 255) return;
      w.fail("an exit code 0-255", v);
  }
}

}  // namespace

void validate_params(const FaultKindSpec& kind, const nlohmann::json& params, const plan_json::Where& w) {
  if (!params.is_object()) w.fail("an object", params);
  for (const auto& [key, value] : params.items()) {
    const ParamSpec* found = nullptr;
    for (const auto& p : kind.params) {
      if (p.name == key) found = &p;
    }
    if (found == nullptr) {
      std::string list;
      for (const auto& p : kind.params) list += (list.empty() ? "" : ", ") + std::string(p.name);
      w.at(key).fail_text(std::string("a parameter of ") + to_string(kind.layer) + " " +
                              std::string(kind.kind) + " (" + (list.empty() ? "it takes none" : list) + ")",
                          "\"" + key + "\"");
    }
    check_value(*found, value, w.at(key));
  }
  for (const auto& p : kind.params) {
    if (p.required && !params.contains(std::string(p.name))) {
      w.at(p.name).fail_text("a value (" + std::string(p.meaning) + ")", "nothing");
    }
  }
}

}  // namespace ncclfi::kinds

namespace ncclfi {

ParamReader::ParamReader(const FaultKindSpec& kind, const nlohmann::json& params,
                         const plan_json::Where& where)
    : kind_(kind), params_(params), where_(where) {}

const ParamSpec& ParamReader::spec(std::string_view name) const {
  for (const auto& p : kind_.params) {
    if (p.name == name) return p;
  }
  throw std::logic_error(std::string(kind_.kind) + " reads an undeclared parameter " + std::string(name));
}

const nlohmann::json* ParamReader::value(std::string_view name) const {
  const ParamSpec& s = spec(name);
  if (auto it = params_.find(std::string(name)); it != params_.end()) return &*it;
  if (s.default_json.empty()) return nullptr;
  auto [it, inserted] = defaults_.try_emplace(std::string(name));
  if (inserted) it->second = nlohmann::json::parse(s.default_json);
  return &it->second;
}

const nlohmann::json& ParamReader::required_value(std::string_view name) const {
  const nlohmann::json* v = value(name);
  if (v == nullptr) {
    throw std::logic_error(std::string(kind_.kind) + " reads " + std::string(name) +
                           " as always present, but it has no default");
  }
  return *v;
}

bool ParamReader::has(std::string_view name) const {
  spec(name);
  return params_.contains(std::string(name));
}

double ParamReader::number(std::string_view name) const {
  return required_value(name).get<double>();
}

std::optional<double> ParamReader::optional_number(std::string_view name) const {
  const nlohmann::json* v = value(name);
  return v != nullptr ? std::optional<double>(v->get<double>()) : std::nullopt;
}

uint64_t ParamReader::integer(std::string_view name) const {
  return required_value(name).get<uint64_t>();
}

std::optional<uint64_t> ParamReader::optional_integer(std::string_view name) const {
  const nlohmann::json* v = value(name);
  return v != nullptr ? std::optional<uint64_t>(v->get<uint64_t>()) : std::nullopt;
}

std::string ParamReader::choice(std::string_view name) const {
  return required_value(name).get<std::string>();
}

NcclError ParamReader::code(std::string_view name) const {
  const nlohmann::json& v = required_value(name);
  auto code =
      v.is_string() ? nccl_error_from_name(v.get<std::string>()) : nccl_error_from_int(v.get<long long>());
  if (!code)
    throw std::logic_error(std::string(kind_.kind) + ": " + std::string(name) + " was not validated");
  return *code;
}

int ParamReader::signal(std::string_view name) const {
  const nlohmann::json& v = required_value(name);
  auto sig = v.is_string() ? signal_from_name(v.get<std::string>()) : signal_from_int(v.get<long long>());
  if (!sig.number)
    throw std::logic_error(std::string(kind_.kind) + ": " + std::string(name) + " was not validated");
  return *sig.number;
}

int ParamReader::exit_code(std::string_view name) const {
  return required_value(name).get<int>();
}

void ParamReader::fail(std::string_view name, const std::string& expected) const {
  const plan_json::Where w = where_.at(name);
  if (auto it = params_.find(std::string(name)); it != params_.end()) w.fail(expected, *it);
  w.fail_text(expected, "nothing");
}

}  // namespace ncclfi
