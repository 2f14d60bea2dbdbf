#include "schema_check.h"

#include "line_regex.h"
#include "ncclfi/plan.h"

namespace ncclfi::cli {
namespace {

using nlohmann::json;

// "/key" with '~' and '/' escaped as RFC 6901 says (nlohmann's json_pointer does the escaping).
std::string pointer_token(const std::string& key) {
  return (json::json_pointer() / key).to_string();
}

std::string number_text(double v) {
  json j = v;
  if (v == static_cast<double>(static_cast<long long>(v))) j = static_cast<long long>(v);
  return j.dump();
}

bool has_type(const json& value, const std::string& type) {
  if (type == "object") return value.is_object();
  if (type == "array") return value.is_array();
  if (type == "string") return value.is_string();
  if (type == "boolean") return value.is_boolean();
  if (type == "integer") return value.is_number_integer();
  if (type == "number") return value.is_number();
  if (type == "null") return value.is_null();
  return false;
}

std::string type_words(const std::string& type) {
  if (type == "object") return "an object";
  if (type == "array") return "an array";
  if (type == "string") return "a string";
  if (type == "boolean") return "true or false";
  if (type == "integer") return "an integer";
  if (type == "number") return "a number";
  return type;
}

// What the schema expects, in words: x-expected when given, else built from type, enum and bounds.
std::string expectation(const json& schema) {
  if (schema.contains("x-expected")) return schema["x-expected"].get<std::string>();
  if (schema.contains("enum")) {
    std::string words = "one of ";
    bool first = true;
    for (const auto& choice : schema["enum"]) {
      words += (first ? "" : ", ") + choice.dump();
      first = false;
    }
    return words;
  }
  std::string words = schema.contains("type") ? type_words(schema["type"].get<std::string>()) : "a value";
  if (schema.contains("minimum") && schema.contains("maximum")) {
    return words + " from " + number_text(schema["minimum"].get<double>()) + " to " +
           number_text(schema["maximum"].get<double>());
  }
  if (schema.contains("minimum")) words += " >= " + number_text(schema["minimum"].get<double>());
  if (schema.contains("exclusiveMinimum"))
    words += " > " + number_text(schema["exclusiveMinimum"].get<double>());
  if (schema.contains("maximum")) words += " <= " + number_text(schema["maximum"].get<double>());
  if (schema.contains("minItems")) words = "a non-empty array";
  if (schema.contains("minLength")) words = "a non-empty string";
  if (schema.contains("maxLength"))
    words += " of at most " + number_text(schema["maxLength"].get<double>()) + " characters";
  return words;
}

class Checker {
 public:
  explicit Checker(const json& root) : root_(root) {}
  SchemaResult result;

  const json& resolve(const json& schema) const {
    if (schema.contains("$ref")) {
      const auto ref = schema["$ref"].get<std::string>();
      return root_.at(json::json_pointer(ref.substr(1)));
    }
    return schema;
  }

  // Returns false (and records a violation) when the value does not fit.
  bool check(const json& value, const json& schema_in, const std::string& ptr, bool record = true) {
    const json& schema = resolve(schema_in);
    if (schema.contains("anyOf")) return check_any_of(value, schema, ptr, record);
    if (schema.contains("enum")) {
      for (const auto& choice : schema["enum"]) {
        if (choice == value) return true;
      }
      return fail(value, schema, ptr, record);
    }
    if (schema.contains("type") && !has_type(value, schema["type"].get<std::string>())) {
      return fail(value, schema, ptr, record);
    }
    if (!within_bounds(value, schema)) return fail(value, schema, ptr, record);
    if (schema.contains("x-ncclfi")) result.deferred.push_back({schema["x-ncclfi"].get<std::string>(), ptr});
    if (value.is_array()) return check_array(value, schema, ptr, record);
    if (value.is_object()) return check_object(value, schema, ptr, record);
    return true;
  }

 private:
  bool fail(const json& value, const json& schema, const std::string& ptr, bool record) {
    if (record) result.violations.push_back({ptr, expectation(schema), describe_json(value)});
    return false;
  }

  // The first alternative that fits wins, with what it deferred; none fitting is one violation.
  bool check_any_of(const json& value, const json& schema, const std::string& ptr, bool record) {
    for (const auto& alt : schema["anyOf"]) {
      Checker probe(root_);
      if (probe.check(value, alt, ptr, true)) {
        for (auto& d : probe.result.deferred) result.deferred.push_back(d);
        return true;
      }
    }
    return fail(value, schema, ptr, record);
  }

  // A number's minimum and maximum; a string's length and pattern.
  static bool within_bounds(const json& value, const json& schema) {
    if (value.is_number()) {
      const double v = value.get<double>();
      if ((schema.contains("minimum") && v < schema["minimum"].get<double>()) ||
          (schema.contains("exclusiveMinimum") && v <= schema["exclusiveMinimum"].get<double>()) ||
          (schema.contains("maximum") && v > schema["maximum"].get<double>())) {
        return false;
      }
    }
    if (value.is_string()) {
      const auto& s = value.get_ref<const std::string&>();
      if (schema.contains("minLength") && s.size() < schema["minLength"].get<size_t>()) return false;
      // maxLength before pattern: the pattern then reads a short string whole.
      if (schema.contains("maxLength") && s.size() > schema["maxLength"].get<size_t>()) return false;
      if (schema.contains("pattern") && !harness::LineRegex(schema["pattern"].get<std::string>()).search(s)) {
        return false;
      }
    }
    return true;
  }

  bool check_array(const json& value, const json& schema, const std::string& ptr, bool record) {
    if (schema.contains("minItems") && value.size() < schema["minItems"].get<size_t>()) {
      return fail(value, schema, ptr, record);
    }
    if (schema.contains("maxItems") && value.size() > schema["maxItems"].get<size_t>()) {
      return fail(value, schema, ptr, record);
    }
    bool ok = true;
    if (schema.contains("items")) {
      for (size_t i = 0; i < value.size(); ++i) {
        ok = check(value[i], schema["items"], ptr + "/" + std::to_string(i), record) && ok;
      }
    }
    return ok;
  }

  bool check_object(const json& value, const json& schema, const std::string& ptr, bool record) {
    bool ok = true;
    if (schema.contains("required")) {
      for (const auto& key : schema["required"]) {
        const auto k = key.get<std::string>();
        if (!value.contains(k)) {
          const json& sub =
              schema["properties"].contains(k) ? resolve(schema["properties"][k]) : json::object();
          if (record) result.violations.push_back({ptr + pointer_token(k), expectation(sub), "nothing"});
          ok = false;
        }
      }
    }
    const json* props = schema.contains("properties") ? &schema["properties"] : nullptr;
    for (auto it = value.begin(); it != value.end(); ++it) {
      const std::string child = ptr + pointer_token(it.key());
      if (props != nullptr && props->contains(it.key())) {
        ok = check(it.value(), (*props)[it.key()], child, record) && ok;
      } else if (schema.contains("additionalProperties")) {
        ok = check_additional(it.key(), it.value(), schema["additionalProperties"], props, child, record) &&
             ok;
      }
    }
    return ok;
  }

  // A key the schema does not list: refused (naming the known keys) or checked against the schema given.
  bool check_additional(const std::string& key, const json& value, const json& extra, const json* props,
                        const std::string& child, bool record) {
    if (extra.is_boolean() && !extra.get<bool>()) {
      std::string known;
      if (props != nullptr) {
        for (auto p = props->begin(); p != props->end(); ++p) known += (known.empty() ? "" : ", ") + p.key();
      }
      if (record)
        result.violations.push_back(
            {child, "no such key (known keys: " + known + ")", "key \"" + key + "\""});
      return false;
    }
    if (extra.is_object()) return check(value, extra, child, record);
    return true;
  }

  const json& root_;
};

}  // namespace

SchemaResult check_against_schema(const nlohmann::json& doc, const nlohmann::json& schema) {
  Checker checker(schema);
  checker.check(doc, schema, "");
  return std::move(checker.result);
}

}  // namespace ncclfi::cli
