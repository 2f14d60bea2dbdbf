#include "scenario_yaml.h"

#include <regex>
#include <stdexcept>

#include <yaml-cpp/yaml.h>

namespace ncclfi::cli {
using nlohmann::json;

namespace {

std::string escape_token(const std::string& key) {
  return (json::json_pointer() / key).to_string().substr(1);  // the library escapes ~ and / (RFC 6901)
}

// A plain (unquoted) scalar by the YAML 1.2 core schema.
json plain_scalar(const std::string& text) {
  static const std::regex null_re("~|null|Null|NULL|");
  static const std::regex true_re("true|True|TRUE");
  static const std::regex false_re("false|False|FALSE");
  static const std::regex int_re("[-+]?[0-9]+");
  static const std::regex float_re(R"([-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?)");
  if (std::regex_match(text, null_re)) return nullptr;
  if (std::regex_match(text, true_re)) return true;
  if (std::regex_match(text, false_re)) return false;
  if (std::regex_match(text, int_re)) {
    try {
      return text[0] == '-' ? json(std::stoll(text))
                            : json(std::stoull(text[0] == '+' ? text.substr(1) : text));
    } catch (const std::out_of_range&) {
      return json::parse(text[0] == '+' ? text.substr(1) : text);  // a double, as JSON would read it
    }
  }
  if (std::regex_match(text, float_re)) return std::stod(text);
  return text;
}

// What a YAML document may expand to. Aliases share one node in yaml-cpp's graph, but the JSON document
// copies each use: a 400-byte "billion laughs" file of nested aliases would expand to gigabytes. The
// file's own size limit cannot see that, so the expansion is counted as it is built and refused past
// these (a scenario has hundreds of values; 4096 ranks listed one by one stay far below).
constexpr size_t kMaxYamlNodes = 50000;
constexpr size_t kMaxYamlScalarBytes = 4 << 20;

struct Budget {
  size_t nodes = 0;
  size_t scalar_bytes = 0;
  void spend(const YAML::Node& node) {
    if (++nodes > kMaxYamlNodes) {
      throw std::runtime_error("line " + std::to_string(node.Mark().line + 1) +
                               ": the document expands to more than " + std::to_string(kMaxYamlNodes) +
                               " values (aliases repeated inside aliases?): refused");
    }
    if (node.IsScalar() && (scalar_bytes += node.Scalar().size()) > kMaxYamlScalarBytes) {
      throw std::runtime_error("line " + std::to_string(node.Mark().line + 1) +
                               ": the document expands to more than " +
                               std::to_string(kMaxYamlScalarBytes >> 20) +
                               " MiB of text (aliases repeated inside aliases?): refused");
    }
  }
};

json convert(const YAML::Node& node, const std::string& pointer, LineMap& lines, Budget& budget) {
  budget.spend(node);
  lines.emplace(pointer, node.Mark().line + 1);  // a mapping's value already has its key's line
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
    case YAML::NodeType::Scalar:
      // yaml-cpp tags a quoted scalar "!" and a plain one "?".
      return node.Tag() == "!" ? json(node.Scalar()) : plain_scalar(node.Scalar());
    case YAML::NodeType::Sequence: {
      json out = json::array();
      size_t i = 0;
      for (const auto& item : node)
        out.push_back(convert(item, pointer + "/" + std::to_string(i++), lines, budget));
      return out;
    }
    case YAML::NodeType::Map: {
      json out = json::object();
      for (const auto& kv : node) {
        if (!kv.first.IsScalar()) {
          throw std::runtime_error("line " + std::to_string(kv.first.Mark().line + 1) +
                                   ": a mapping key must be a plain text (JSON has no other keys)");
        }
        const std::string key = kv.first.Scalar();
        // JSON input refuses a duplicate key too (bounded_input.h): the later value silently winning
        // would make a scenario say something other than what its author reads first.
        if (out.contains(key)) {
          throw std::runtime_error("line " + std::to_string(kv.first.Mark().line + 1) + ": duplicate key \"" +
                                   key + "\" (each key once per mapping)");
        }
        const std::string child = pointer + "/" + escape_token(key);
        // The key's line: where a nested mapping's problems are best pointed at.
        lines.emplace(child, kv.first.Mark().line + 1);
        out[key] = convert(kv.second, child, lines, budget);
      }
      return out;
    }
  }
  return nullptr;
}

}  // namespace

bool is_yaml_path(const std::string& path) {
  auto ends_with = [&](const char* ext) {
    const std::string e(ext);
    return path.size() > e.size() && path.compare(path.size() - e.size(), e.size(), e) == 0;
  };
  return ends_with(".yaml") || ends_with(".yml");
}

json yaml_to_json(const std::string& text, LineMap& lines) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw std::runtime_error("line " + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  Budget budget;
  return convert(root, "", lines, budget);
}

int line_of(const LineMap& lines, const std::string& pointer) {
  std::string p = pointer;
  while (true) {
    if (const auto it = lines.find(p); it != lines.end()) return it->second;
    if (p.empty()) return 0;
    p = p.substr(0, p.rfind('/'));
  }
}

}  // namespace ncclfi::cli
