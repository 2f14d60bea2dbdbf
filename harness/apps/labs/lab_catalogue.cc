#include "lab_catalogue.h"

#include <algorithm>
#include <filesystem>
#include <regex>
#include <stdexcept>

#include "lab_grading.h"
#include "ncclfi/bounded_input.h"
#include "scenario.h"

namespace ncclfi::cli::lab {
namespace fs = std::filesystem;

namespace {

void require(bool ok, const std::string& file, const std::string& what) {
  if (!ok) throw std::runtime_error(file + ": " + what);
}

Lab parse_lab(const std::string& file, const nlohmann::json& doc) {
  Lab lab;
  lab.file = file;
  lab.doc = doc;
  require(doc.is_object(), file, "expected a lab object");
  for (const char* key : {"lab", "title", "topic", "needs", "symptom", "briefing"}) {
    require(doc.contains(key) && doc[key].is_string(), file, std::string("/") + key + ": expected a string");
  }
  lab.name = doc["lab"];
  lab.title = doc["title"];
  lab.topic = doc["topic"];
  lab.needs = doc["needs"];
  lab.symptom = doc["symptom"];
  require(lab.needs == "cpu" || lab.needs == "one_gpu" || lab.needs == "two_gpus", file,
          "/needs: expected cpu, one_gpu or two_gpus");
  lab.difficulty = doc.value("difficulty", 1);
  require(doc.contains("variants") && doc["variants"].is_array() && !doc["variants"].empty(), file,
          "/variants: expected a non-empty array of objects");
  require(doc.contains("jobs") && doc["jobs"].is_array() && !doc["jobs"].empty(), file,
          "/jobs: expected a non-empty array of {name, scenario}");
  require(doc.contains("hints") && doc["hints"].is_array() && !doc["hints"].empty(), file,
          "/hints: expected a non-empty array");
  require(doc.contains("answer") && doc["answer"].is_object(), file, "/answer: expected an object");
  // Every variant must give a runnable job and a key with a known cause: checked at load, not in class.
  for (size_t v = 0; v < lab.variant_count(); ++v) {
    const LabVariant variant = resolve_variant(lab, v);
    const AnswerKey key = answer_key_from_json(variant.answer);
    require(is_known_cause(key.cause), file, "/answer/cause: unknown cause " + key.cause);
    for (const auto& [wrong, text] : key.misconceptions) {
      const std::string problem = misconception_problem(key.cause, wrong, text);
      require(problem.empty(), file,
              "/answer/misconceptions/" + wrong + " (variant " + std::to_string(v) + "): " + problem);
    }
    for (const auto& job : variant.jobs) {
      require(job.contains("name") && job["name"].is_string() && job.contains("scenario"), file,
              "/jobs: expected {name, scenario}");
      scenario_from_json(job["scenario"], file + " (job " + job["name"].get<std::string>() + ", variant " +
                                              std::to_string(v) + ")");
    }
  }
  return lab;
}

uint64_t splitmix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::string value_text(const nlohmann::json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

}  // namespace

std::vector<Lab> load_lab_catalogue(const std::string& dir) {
  std::vector<Lab> labs;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw std::runtime_error(dir + ": no such lab directory");
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    std::string text;
    const std::string path = entry.path().string();
    if (const std::string error = read_regular_file(path, kMaxInputFileBytes, text); !error.empty()) {
      throw std::runtime_error(path + ": " + error);
    }
    const auto doc = nlohmann::json::parse(text, nullptr, false);
    if (doc.is_discarded()) throw std::runtime_error(path + ": not valid JSON");
    labs.push_back(parse_lab(path, doc));
  }
  std::sort(labs.begin(), labs.end(), [](const Lab& a, const Lab& b) { return a.name < b.name; });
  return labs;
}

const Lab* find_lab(const std::vector<Lab>& labs, const std::string& name) {
  for (const Lab& lab : labs) {
    if (lab.name == name) return &lab;
  }
  return nullptr;
}

uint64_t seed_for_student(const std::string& student) {
  uint64_t h = 1469598103934665603ULL;  // FNV-1a: stable across builds and hosts
  for (const char c : student) h = (h ^ static_cast<uint8_t>(c)) * 1099511628211ULL;
  return h % 1000000;
}

size_t pick_variant(const Lab& lab, uint64_t seed) {
  // The lab's name is mixed in: one student's seed picks unrelated variants in different labs.
  return static_cast<size_t>(splitmix(seed ^ seed_for_student(lab.name)) % lab.variant_count());
}

nlohmann::json substitute_variant(const nlohmann::json& doc, const nlohmann::json& variant) {
  static const std::regex placeholder(R"(\{var:([A-Za-z0-9_]+)\})");
  if (doc.is_string()) {
    const std::string& s = doc.get_ref<const std::string&>();
    std::smatch m;
    if (std::regex_match(s, m, placeholder)) {
      if (!variant.contains(m[1].str()))
        throw std::runtime_error("unknown variant value {var:" + m[1].str() + "}");
      return variant.at(m[1].str());
    }
    std::string out;
    auto begin = s.cbegin();
    while (std::regex_search(begin, s.cend(), m, placeholder)) {
      if (!variant.contains(m[1].str()))
        throw std::runtime_error("unknown variant value {var:" + m[1].str() + "}");
      out.append(begin, m[0].first);
      out += value_text(variant.at(m[1].str()));
      begin = m[0].second;
    }
    out.append(begin, s.cend());
    return out;
  }
  if (doc.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& item : doc) out.push_back(substitute_variant(item, variant));
    return out;
  }
  if (doc.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [k, v] : doc.items()) out[k] = substitute_variant(v, variant);
    return out;
  }
  return doc;
}

LabVariant resolve_variant(const Lab& lab, size_t index) {
  LabVariant v;
  v.index = index;
  v.values = lab.doc.at("variants").at(index);
  try {
    v.jobs = substitute_variant(lab.doc.at("jobs"), v.values);
    v.answer = substitute_variant(lab.doc.at("answer"), v.values);
    v.hints = substitute_variant(lab.doc.at("hints"), v.values);
    v.evidence = substitute_variant(lab.doc.value("evidence", nlohmann::json::array()), v.values);
    v.explanation = substitute_variant(lab.doc.value("explanation", std::string()), v.values);
  } catch (const std::exception& e) {
    throw std::runtime_error(lab.file + ": variant " + std::to_string(index) + ": " + e.what());
  }
  return v;
}

}  // namespace ncclfi::cli::lab
