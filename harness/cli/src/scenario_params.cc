#include "scenario_params.h"

#include <regex>

namespace ncclfi::cli {
using nlohmann::json;

namespace {

const std::regex& placeholder_re() {
  static const std::regex re(R"(\{param:([A-Za-z_][A-Za-z0-9_]*)\})");
  return re;
}

std::string as_text(const json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

std::string known_names(const json& params) {
  std::string names;
  for (const auto& [name, _] : params.items()) names += (names.empty() ? "" : ", ") + name;
  return names.empty() ? "none declared in /params" : names;
}

json substitute(const json& value, const json& params, const std::string& pointer,
                std::vector<ScenarioError::Problem>& problems) {
  if (value.is_object()) {
    json out = json::object();
    for (const auto& [key, item] : value.items())
      out[key] = substitute(item, params, pointer + "/" + key, problems);
    return out;
  }
  if (value.is_array()) {
    json out = json::array();
    for (size_t i = 0; i < value.size(); ++i)
      out.push_back(substitute(value[i], params, pointer + "/" + std::to_string(i), problems));
    return out;
  }
  if (!value.is_string()) return value;
  const std::string text = value.get<std::string>();
  std::smatch whole;
  if (std::regex_match(text, whole, placeholder_re())) {
    if (params.contains(whole[1].str())) return params[whole[1].str()];
    problems.push_back(
        {pointer, "a parameter declared in /params (" + known_names(params) + ")", "\"" + text + "\""});
    return value;
  }
  std::string out;
  auto begin = std::sregex_iterator(text.begin(), text.end(), placeholder_re());
  size_t last = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    out += text.substr(last, static_cast<size_t>(m.position()) - last);
    if (params.contains(m[1].str())) {
      out += as_text(params[m[1].str()]);
    } else {
      problems.push_back(
          {pointer, "a parameter declared in /params (" + known_names(params) + ")", "\"" + m.str() + "\""});
      out += m.str();
    }
    last = static_cast<size_t>(m.position() + m.length());
  }
  return out + text.substr(last);
}

}  // namespace

json substitute_params(const json& doc, std::vector<ScenarioError::Problem>& problems) {
  if (!doc.is_object()) return doc;
  const json params = doc.contains("params") && doc["params"].is_object() ? doc["params"] : json::object();
  json out = json::object();
  for (const auto& [key, value] : doc.items()) {
    // The declarations themselves are values, not uses.
    out[key] = key == "params" ? value : substitute(value, params, "/" + key, problems);
  }
  return out;
}

std::vector<std::string> declared_params(const json& doc) {
  std::vector<std::string> names;
  if (doc.is_object() && doc.contains("params") && doc["params"].is_object()) {
    for (const auto& [name, _] : doc["params"].items()) names.push_back(name);
  }
  return names;
}

}  // namespace ncclfi::cli
