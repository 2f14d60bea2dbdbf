#include "json_field_error.h"

#include <string>

namespace ncclfi::harness {
namespace {

bool throws(const JsonReader& read, const nlohmann::json& doc) {
  try {
    read(doc);
    return false;
  } catch (const std::exception&) {
    return true;
  }
}

// A JSON pointer's reference token (RFC 6901: "~" and "/" escaped).
std::string token(const std::string& key) {
  std::string out;
  for (char c : key) out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return out;
}

// With `doc` failing `read`: the first member (or element) whose removal lets `read` through; then the
// same inside it, with a reader that puts the candidate back in its place.
std::string locate(const nlohmann::json& doc, const JsonReader& read, const std::string& path) {
  if (doc.is_object()) {
    size_t probes = 0;
    for (auto it = doc.begin(); it != doc.end() && probes < kMaxLocateProbes; ++it, ++probes) {
      nlohmann::json without = doc;
      without.erase(it.key());
      if (throws(read, without)) continue;
      const std::string key = it.key();
      const JsonReader inner = [&doc, &read, key](const nlohmann::json& value) {
        nlohmann::json with = doc;
        with[key] = value;
        read(with);
      };
      return locate(*it, inner, path + "/" + token(key));
    }
  } else if (doc.is_array()) {
    for (size_t i = 0; i < doc.size() && i < kMaxLocateProbes; ++i) {
      nlohmann::json without = doc;
      without.erase(without.begin() + static_cast<std::ptrdiff_t>(i));
      if (throws(read, without)) continue;
      const JsonReader inner = [&doc, &read, i](const nlohmann::json& value) {
        nlohmann::json with = doc;
        with[i] = value;
        read(with);
      };
      return locate(doc[i], inner, path + "/" + std::to_string(i));
    }
  }
  return path;
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

std::string article(const std::string& type) {
  return (type == "array" || type == "object" ? "an " : "a ") + type;
}

}  // namespace

std::string json_error_text(const std::exception& error) {
  std::string text = error.what();
  if (text.rfind("[json.exception.", 0) == 0 && text.find("] ") != std::string::npos)
    text.erase(0, text.find("] ") + 2);
  // "type must be string, but is number"
  static const std::string kMust = "type must be ", kButIs = ", but is ";
  if (const auto but = text.find(kButIs); text.rfind(kMust, 0) == 0 && but != std::string::npos)
    return "expected " + article(text.substr(kMust.size(), but - kMust.size())) + ", got " +
           article(text.substr(but + kButIs.size()));
  if (!missing_key(text).empty()) return "missing";
  return text;
}

std::string locate_json_problem(const nlohmann::json& doc, const JsonReader& read,
                                const std::exception& error) {
  std::string path = locate(doc, read, "");
  if (const std::string key = missing_key(error.what()); !key.empty()) path += "/" + token(key);
  return path;
}

std::string json_field_error(const std::string& file, const nlohmann::json& doc, const JsonReader& read,
                             const std::exception& error) {
  const std::string path = locate_json_problem(doc, read, error);
  return file + ": " + (path.empty() ? "/" : path) + ": " + json_error_text(error);
}

}  // namespace ncclfi::harness
