#include "scenario_params.h"

#include <optional>
#include <stdexcept>

#include "scenario.h"

namespace ncclfi::cli {

using nlohmann::json;

namespace {

constexpr std::string_view kOpen = "{param:";

// `pointer` extended by the object key `key`, escaped as RFC 6901 says (the library's json_pointer).
std::string child_pointer(const std::string& pointer, const std::string& key) {
  return pointer + (json::json_pointer() / key).to_string();
}

struct Substituter {
  const json& values;
  const std::string& file;
  std::vector<ScenarioError::Problem>& problems;

  const json* lookup(const std::string& name, const std::string& pointer) {
    const auto it = values.find(name);
    if (it != values.end()) return &*it;
    std::string known;
    for (const auto& [k, v] : values.items()) known += (known.empty() ? "" : ", ") + k;
    problems.push_back({pointer, "a parameter declared in /params (" + (known.empty() ? "none" : known) + ")",
                        "{param:" + name + "}"});
    return nullptr;
  }

  static std::string text_of(const json& v) {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_array()) {
      std::string joined;
      for (const auto& item : v) joined += (joined.empty() ? "" : " ") + text_of(item);
      return joined;
    }
    return v.dump();
  }

  // The name when `s` is exactly one placeholder.
  static std::optional<std::string> whole(const std::string& s) {
    if (s.rfind(kOpen, 0) != 0 || s.back() != '}' || s.find('}') != s.size() - 1) return std::nullopt;
    return s.substr(kOpen.size(), s.size() - kOpen.size() - 1);
  }

  std::string in_text(const std::string& s, const std::string& pointer) {
    std::string out;
    size_t at = 0;
    for (size_t open; (open = s.find(kOpen, at)) != std::string::npos;) {
      const size_t close = s.find('}', open);
      if (close == std::string::npos) break;
      out += s.substr(at, open - at);
      const std::string name = s.substr(open + kOpen.size(), close - open - kOpen.size());
      if (const json* v = lookup(name, pointer)) out += text_of(*v);
      at = close + 1;
    }
    return out + s.substr(at);
  }

  json walk(const json& node, const std::string& pointer) {
    if (node.is_string()) {
      const std::string& s = node.get_ref<const std::string&>();
      if (const auto name = whole(s)) {
        const json* v = lookup(*name, pointer);
        return v != nullptr ? *v : node;
      }
      return in_text(s, pointer);
    }
    if (node.is_array()) {
      json out = json::array();
      for (size_t i = 0; i < node.size(); ++i) {
        const json& item = node[i];
        const std::string at = pointer + "/" + std::to_string(i);
        if (item.is_string()) {
          if (const auto name = whole(item.get<std::string>())) {
            const json* v = lookup(*name, at);
            if (v != nullptr && v->is_array()) {
              for (const auto& x : *v) out.push_back(x);  // a list parameter: its items, maybe none
            } else {
              // An element of a list of arguments is text: "--steps", "{param:steps}" stays two words.
              out.push_back(v != nullptr ? json(text_of(*v)) : item);
            }
            continue;
          }
        }
        out.push_back(walk(item, at));
      }
      return out;
    }
    if (node.is_object()) {
      json out = json::object();
      for (const auto& [k, v] : node.items()) {
        out[k] = pointer.empty() && k == "params" ? v : walk(v, child_pointer(pointer, k));
      }
      return out;
    }
    return node;
  }
};

// `text` read as the type of `default_value`.
json typed_override(const std::string& name, const std::string& text, const json& default_value,
                    std::vector<ScenarioError::Problem>& problems) {
  const std::string pointer = child_pointer("/params", name);
  if (default_value.is_number()) {
    try {
      size_t used = 0;
      const double v = std::stod(text, &used);
      if (used == text.size())
        return default_value.is_number_integer() && v == static_cast<long long>(v)
                   ? json(static_cast<long long>(v))
                   : json(v);
    } catch (const std::exception&) {
    }
    problems.push_back({pointer, "a number (--param " + name + "=...)", "\"" + text + "\""});
    return default_value;
  }
  if (default_value.is_array()) {
    try {
      return split_words(text);
    } catch (const std::invalid_argument& e) {
      problems.push_back({pointer, std::string("words to split (") + e.what() + ")", "\"" + text + "\""});
      return default_value;
    }
  }
  return text;
}

}  // namespace

std::vector<std::string> split_words(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else if (c == '\'' || c == '"') {
      const size_t close = text.find(c, i + 1);
      if (close == std::string::npos) throw std::invalid_argument(std::string("unterminated ") + c);
      word += text.substr(i + 1, close - i - 1);
      in_word = true;
      i = close;
    } else if (c == '\\' && i + 1 < text.size()) {
      word += text[++i];
      in_word = true;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(word);
  return words;
}

std::pair<std::string, std::string> parse_param_assignment(const std::string& text) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) throw std::invalid_argument("expected NAME=VALUE, got " + text);
  return {text.substr(0, eq), text.substr(eq + 1)};
}

json apply_scenario_params(const json& doc, const ParamOverrides& overrides, const std::string& file) {
  std::vector<ScenarioError::Problem> problems;
  json values = json::object();
  if (doc.is_object() && doc.contains("params")) {
    if (!doc["params"].is_object()) {
      throw ScenarioError(file,
                          {{"/params", "an object of parameter defaults", describe_json(doc["params"])}});
    }
    values = doc["params"];
  }
  for (const auto& [name, text] : overrides) {
    if (!values.contains(name)) {
      std::string known;
      for (const auto& [k, v] : values.items()) known += (known.empty() ? "" : ", ") + k;
      problems.push_back({"/params",
                          "a parameter to set (" + (known.empty() ? "this scenario has none" : known) + ")",
                          "--param " + name});
      continue;
    }
    values[name] = typed_override(name, text, values[name], problems);
  }
  if (!problems.empty()) throw ScenarioError(file, problems);
  if (values.empty() && overrides.empty()) return doc;
  // A value may name other parameters ("--timeout={param:timeout_s}" in a list of script arguments):
  // one pass, so a chain or a loop is an error rather than a guess.
  json resolved = values;
  {
    Substituter once{values, file, problems};
    for (auto& [k, v] : resolved.items()) {
      v = once.walk(v, child_pointer("/params", k));
      if (v.dump().find(kOpen) != std::string::npos) {
        problems.push_back({child_pointer("/params", k),
                            "a value naming parameters that name no other parameter", describe_json(v)});
      }
    }
    if (!problems.empty()) throw ScenarioError(file, problems);
  }
  values = resolved;
  Substituter sub{values, file, problems};
  json out = sub.walk(doc, "");
  if (!problems.empty()) throw ScenarioError(file, problems);
  if (doc.contains("params")) out["params"] = values;
  return out;
}

std::vector<std::string> declared_params(const json& doc) {
  std::vector<std::string> names;
  if (doc.is_object() && doc.contains("params") && doc["params"].is_object()) {
    for (const auto& [name, value] : doc["params"].items()) names.push_back(name);
  }
  return names;
}

}  // namespace ncclfi::cli
