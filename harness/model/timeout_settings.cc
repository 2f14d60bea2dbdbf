// Reading the settings file of `ncclfi timeouts` (timeout_settings.h).
#include "timeout_settings.h"

#include <algorithm>
#include <stdexcept>

#include "ncclfi/plan.h"

namespace ncclfi::cli {

using nlohmann::json;

namespace {

[[noreturn]] void bad(const std::string& file, const std::string& pointer, const std::string& expected,
                      const json& found) {
  throw std::invalid_argument(file + ": " + (pointer.empty() ? "/" : pointer) + ": expected " + expected +
                              ", got " + describe_json(found));
}

}  // namespace

std::vector<TimeoutSetting> parse_timeout_settings(const json& doc, const std::string& file) {
  if (!doc.is_object() || !doc.contains("settings")) bad(file, "", "an object with \"settings\"", doc);
  const json& list = doc["settings"];
  if (!list.is_array() || list.empty()) bad(file, "/settings", "a non-empty array of settings", list);
  std::vector<TimeoutSetting> settings;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string at = "/settings/" + std::to_string(i);
    const json& s = list[i];
    if (!s.is_object()) bad(file, at, "a setting object", s);
    for (const auto& [key, value] : s.items()) {
      static const std::vector<std::string> kKeys = {"name", "summary",      "params",
                                                     "env",  "max_restarts", "timeout_s"};
      if (std::find(kKeys.begin(), kKeys.end(), key) == kKeys.end())
        bad(file, at + "/" + key, "one of name, summary, params, env, max_restarts, timeout_s", "key " + key);
    }
    TimeoutSetting t;
    if (!s.contains("name") || !s["name"].is_string() || s["name"].get<std::string>().empty())
      bad(file, at + "/name", "a non-empty name", s.value("name", json()));
    t.name = s["name"].get<std::string>();
    for (const auto& other : settings) {
      if (other.name == t.name) bad(file, at + "/name", "a name no other setting has", s["name"]);
    }
    if (t.name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") !=
        std::string::npos)
      bad(file, at + "/name", "letters, digits, '-', '_' or '.' (it names run directories)", s["name"]);
    if (s.contains("summary")) {
      if (!s["summary"].is_string()) bad(file, at + "/summary", "text", s["summary"]);
      t.summary = s["summary"].get<std::string>();
    }
    if (s.contains("params")) {
      if (!s["params"].is_object())
        bad(file, at + "/params", "an object of scenario parameters", s["params"]);
      for (const auto& [k, v] : s["params"].items()) {
        if (!v.is_string() && !v.is_number() && !v.is_array())
          bad(file, at + "/params/" + k, "text, a number or a list of words", v);
        t.params[k] = v;
      }
    }
    if (s.contains("env")) {
      if (!s["env"].is_object()) bad(file, at + "/env", "an object of environment variables", s["env"]);
      for (const auto& [k, v] : s["env"].items()) {
        if (!v.is_string()) bad(file, at + "/env/" + k, "a string value", v);
        t.env[k] = v.get<std::string>();
      }
    }
    if (s.contains("max_restarts")) {
      if (!s["max_restarts"].is_number_integer() || s["max_restarts"].get<int>() < 0 ||
          s["max_restarts"].get<int>() > 100)
        bad(file, at + "/max_restarts", "an integer from 0 to 100", s["max_restarts"]);
      t.max_restarts = s["max_restarts"].get<int>();
    }
    if (s.contains("timeout_s")) {
      if (!s["timeout_s"].is_number() || s["timeout_s"].get<double>() <= 0 ||
          s["timeout_s"].get<double>() > 86400)
        bad(file, at + "/timeout_s", "seconds, > 0 and at most a day", s["timeout_s"]);
      t.timeout_s = s["timeout_s"].get<double>();
    }
    settings.push_back(std::move(t));
  }
  return settings;
}

}  // namespace ncclfi::cli
