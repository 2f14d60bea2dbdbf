#include "json_field_error.h"

#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace ncclfi::harness {
namespace {

// What `read` says about `doc`: "" when it takes it, else the exception's text.
std::string outcome(const JsonReader& read, const nlohmann::json& doc) {
  try {
    read(doc);
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

// A JSON pointer's reference token (RFC 6901: "~" and "/" escaped).
std::string token(const std::string& key) {
  std::string out;
  for (char c : key) out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return out;
}

// A stand-in of the JSON type the library's "type must be X, but is Y" expected (X), else null.
nlohmann::json stand_in(const std::string& expected) {
  if (expected == "string") return "";
  if (expected == "number") return 0;
  if (expected == "boolean") return false;
  if (expected == "array") return nlohmann::json::array();
  if (expected == "object") return nlohmann::json::object();
  return nullptr;
}

// The library's "type must be X, but is Y" as {X, Y}; empty strings for any other message.
std::pair<std::string, std::string> type_mismatch(const std::string& text) {
  static const std::string kMust = "type must be ", kButIs = ", but is ";
  const auto must = text.find(kMust);
  const auto but = text.find(kButIs);
  if (must == std::string::npos || but == std::string::npos || but < must) return {};
  return {text.substr(must + kMust.size(), but - must - kMust.size()), text.substr(but + kButIs.size())};
}

// The key of the library's "key 'NAME' not found" ("" for any other message).
std::string missing_key(const std::string& text) {
  static const std::string kKey = "key '", kNotFound = "' not found";
  const auto from = text.find(kKey);
  if (from == std::string::npos || text.size() < kNotFound.size() ||
      text.compare(text.size() - kNotFound.size(), kNotFound.size(), kNotFound) != 0 ||
      from + kKey.size() > text.size() - kNotFound.size())
    return "";
  return text.substr(from + kKey.size(), text.size() - kNotFound.size() - from - kKey.size());
}

// What is searched for: the value of the wrong type (`got` where `expected` was wanted), or the object
// that lacks the `missing` key; `budget`: re-reads left.
struct Search {
  std::string error;
  std::string expected, got, missing;
  size_t budget = 8 * kMaxLocateProbes;
};

// With `doc` failing `read` with `search.error`, the pointer (under `path`) of the field: a value of
// the type the library got whose replacement by one of the expected type lets `read` through, or an
// object that lacks the missing key and reads differently once it has it. Containers whose emptying lets
// `read` through are searched first (the field is in them), then the others. Each candidate is put in
// its place by the reader handed down.
std::optional<std::string> find_field(const nlohmann::json& doc, const JsonReader& read, Search& search,
                                      const std::string& path) {
  if (!doc.is_structured()) return std::nullopt;
  std::vector<std::pair<std::string, nlohmann::json::json_pointer>> members;  // (token, where)
  size_t index = 0;
  for (auto it = doc.begin(); it != doc.end() && index < kMaxLocateProbes; ++it, ++index) {
    const std::string key = doc.is_object() ? token(it.key()) : std::to_string(index);
    members.emplace_back(key, nlohmann::json::json_pointer("/" + key));
  }
  auto probe = [&](const nlohmann::json::json_pointer& where, const nlohmann::json& value) {
    if (search.budget == 0) return search.error;
    --search.budget;
    nlohmann::json with = doc;
    with[where] = value;
    return outcome(read, with);
  };
  for (const auto& [key, where] : members) {
    const nlohmann::json& value = doc[where];
    if (!search.got.empty() && value.type_name() == search.got &&
        probe(where, stand_in(search.expected)).empty())
      return path + "/" + key;
    if (!search.missing.empty() && value.is_object() && !value.contains(search.missing)) {
      nlohmann::json completed = value;
      completed[search.missing] = nullptr;
      if (probe(where, completed) != search.error) return path + "/" + key;
    }
  }
  std::vector<std::pair<std::string, nlohmann::json::json_pointer>> holding, others;
  for (const auto& member : members) {
    const nlohmann::json& value = doc[member.second];
    if (!value.is_structured()) continue;
    const nlohmann::json empty = value.is_array() ? nlohmann::json::array() : nlohmann::json::object();
    (probe(member.second, empty).empty() ? holding : others).push_back(member);
  }
  for (const auto* group : {&holding, &others}) {
    for (const auto& [key, where] : *group) {
      const JsonReader inner = [&doc, &read, where = where](const nlohmann::json& value) {
        nlohmann::json with = doc;
        with[where] = value;
        read(with);
      };
      if (auto found = find_field(doc[where], inner, search, path + "/" + key)) return found;
    }
  }
  if (!holding.empty()) return path + "/" + holding.front().first;
  return std::nullopt;
}

std::string article(const std::string& type) {
  return (type == "array" || type == "object" ? "an " : "a ") + type;
}

}  // namespace

std::string json_error_text(const std::exception& error) {
  std::string text = error.what();
  if (text.rfind("[json.exception.", 0) == 0 && text.find("] ") != std::string::npos)
    text.erase(0, text.find("] ") + 2);
  if (const auto [expected, got] = type_mismatch(text); !expected.empty())
    return "expected " + article(expected) + ", got " + article(got);
  if (!missing_key(text).empty()) return "missing";
  return text;
}

std::string locate_json_problem(const nlohmann::json& doc, const JsonReader& read,
                                const std::exception& error) {
  Search search;
  search.error = error.what();
  std::tie(search.expected, search.got) = type_mismatch(search.error);
  search.missing = missing_key(search.error);
  std::string path = find_field(doc, read, search, "").value_or("");
  if (!search.missing.empty()) path += "/" + token(search.missing);
  return path;
}

std::string json_field_error(const std::string& file, const nlohmann::json& doc, const JsonReader& read,
                             const std::exception& error) {
  const std::string path = locate_json_problem(doc, read, error);
  return file + ": " + (path.empty() ? "/" : path) + ": " + json_error_text(error);
}

}  // namespace ncclfi::harness
