#include "lab_catalogue.h"

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>
#include <stdexcept>

#include <openssl/rand.h>

#include "lab_grading.h"
#include "ncclfi/bounded_input.h"
#include "scenario.h"

namespace ncclfi::cli::lab {
namespace fs = std::filesystem;

namespace {

// A cause's draw may not multiply out beyond this: every combination is checked when the catalogue loads.
constexpr size_t kMaxCombinations = 4096;

void require(bool ok, const std::string& file, const std::string& what) {
  if (!ok) throw std::runtime_error(file + ": " + what);
}

// Every combination of `draw` ({"rank": [0, 1], "ms": [8, 12]}), in sorted name order, the last name
// varying fastest.
std::vector<nlohmann::json> combinations(const nlohmann::json& draw, const std::string& where) {
  std::vector<nlohmann::json> sets = {nlohmann::json::object()};
  for (const auto& [name, values] : draw.items()) {
    require(values.is_array() && !values.empty(), where, "/draw/" + name + ": expected a non-empty array");
    std::vector<nlohmann::json> next;
    for (const auto& set : sets) {
      for (const auto& v : values) {
        nlohmann::json s = set;
        s[name] = v;
        next.push_back(std::move(s));
      }
    }
    sets = std::move(next);
    require(sets.size() <= kMaxCombinations, where,
            "/draw: more than " + std::to_string(kMaxCombinations) + " combinations");
  }
  return sets;
}

LabCause parse_cause(const std::string& file, const std::string& where, const nlohmann::json& doc) {
  LabCause cause;
  require(doc.is_object(), file, where + ": expected a cause object");
  for (const char* key : {"id", "site"}) {
    require(doc.contains(key) && doc[key].is_string(), file, where + "/" + key + ": expected a string");
  }
  cause.id = doc["id"];
  cause.site = doc["site"];
  cause.doc = doc;
  const auto& sites = lab_sites();
  require(std::find(sites.begin(), sites.end(), cause.site) != sites.end(), file,
          where + "/site: unknown site " + cause.site);
  require(doc.contains("jobs") && doc["jobs"].is_array() && !doc["jobs"].empty(), file,
          where + "/jobs: expected a non-empty array of {name, about, scenario}");
  require(doc.contains("hints") && doc["hints"].is_array() && !doc["hints"].empty(), file,
          where + "/hints: expected a non-empty array");
  require(doc.contains("answer") && doc["answer"].is_object(), file, where + "/answer: expected an object");
  const nlohmann::json draw = doc.value("draw", nlohmann::json::object());
  require(draw.is_object(), file, where + "/draw: expected an object of arrays");
  if (doc.contains("variants")) {  // the older form: the value sets written out one by one
    require(doc["variants"].is_array() && !doc["variants"].empty(), file,
            where + "/variants: expected a non-empty array of objects");
    for (const auto& v : doc["variants"]) cause.value_sets.push_back(v);
  } else {
    cause.value_sets = combinations(draw, file + ": " + where);
  }
  return cause;
}

// The jobs' names and what they are about, which the workspace shows whatever the cause.
nlohmann::json job_outline(const nlohmann::json& jobs) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& job : jobs) out.push_back({job.value("name", ""), job.value("about", "")});
  return out;
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
  if (doc.contains("ranks_per_node")) {
    const auto& k = doc["ranks_per_node"];
    require(k.is_number_integer() && k.get<int64_t>() >= 1 && k.get<int64_t>() <= 8, file,
            "/ranks_per_node: expected a whole number from 1 to 8 (GPUs of one node)");
    lab.ranks_per_node = k.get<int>();
    // The GPU labs share one GPU, each rank a node of its own to NCCL (shared-GPU mode).
    require(lab.ranks_per_node == 1 || lab.needs == "cpu", file,
            "/ranks_per_node: more than one rank per node only in a CPU lab (needs cpu)");
  }
  if (doc.contains("causes")) {
    require(doc["causes"].is_array() && !doc["causes"].empty(), file,
            "/causes: expected a non-empty array of causes");
    for (size_t c = 0; c < doc["causes"].size(); ++c)
      lab.causes.push_back(parse_cause(file, "/causes/" + std::to_string(c), doc["causes"][c]));
  } else {
    // A lab of one cause written at the top level (variants, jobs, answer, hints): tests keep it short.
    nlohmann::json cause = doc;
    cause["id"] = "default";
    cause["site"] = doc.value("site", "none");
    lab.causes.push_back(parse_cause(file, "", cause));
  }
  std::set<std::string> ids;
  for (const LabCause& cause : lab.causes) {
    require(ids.insert(cause.id).second, file, "/causes: the id " + cause.id + " is there twice");
    // The workspace's folders must not tell the causes apart.
    require(job_outline(cause.doc["jobs"]) == job_outline(lab.causes.front().doc["jobs"]), file,
            "/causes: cause " + cause.id + "'s jobs (names, about) differ from cause " +
                lab.causes.front().id + "'s");
  }
  // Every variant must give a runnable job and a key with a known cause: checked at load, not in class.
  for (size_t v = 0; v < lab.variant_count(); ++v) {
    const LabVariant variant = resolve_variant(lab, v);
    const std::string where = " (cause " + variant.cause_id + ", values " + variant.values.dump() + ")";
    for (const auto& job : variant.jobs) {
      const int ranks = job["scenario"]["workload"].value("ranks", 1);
      require(ranks % lab.ranks_per_node == 0, file,
              "/ranks_per_node: job " + job.value("name", std::string()) + " has " + std::to_string(ranks) +
                  " ranks, not whole nodes of " + std::to_string(lab.ranks_per_node) + where);
    }
    require(variant.answer.contains("cause") && variant.answer["cause"].is_string(), file,
            "/answer/cause: expected a string" + where);
    const AnswerKey key = answer_key_from_json(variant.answer);
    require(is_known_cause(key.cause), file, "/answer/cause: unknown cause " + key.cause + where);
    for (const auto& [wrong, text] : key.misconceptions) {
      const std::string problem = misconception_problem(key.cause, wrong, text);
      require(problem.empty(), file, "/answer/misconceptions/" + wrong + where + ": " + problem);
    }
    for (const auto& job : variant.jobs) {
      require(job.contains("name") && job["name"].is_string() && job.contains("scenario"), file,
              "/jobs: expected {name, scenario}" + where);
      scenario_from_json(job["scenario"], file + " (job " + job["name"].get<std::string>() + where + ")");
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

uint64_t fnv1a(const std::string& text) {
  uint64_t h = 1469598103934665603ULL;  // stable across builds and hosts
  for (const char c : text) h = (h ^ static_cast<uint8_t>(c)) * 1099511628211ULL;
  return h;
}

std::string value_text(const nlohmann::json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

}  // namespace

const std::vector<std::string>& lab_sites() {
  static const std::vector<std::string> sites = {"nic",       "congestion",    "degraded_link", "nvlink",
                                                 "pcie",      "host_hang",     "gpu_hang",      "dead_rank",
                                                 "bootstrap", "configuration", "none"};
  return sites;
}

size_t Lab::variant_count() const {
  size_t n = 0;
  for (const LabCause& c : causes) n += c.value_sets.size();
  return n;
}

const LabCause* Lab::find_cause(const std::string& id) const {
  for (const LabCause& c : causes) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

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

uint64_t random_seed() {
  uint64_t seed = 0;
  if (RAND_bytes(reinterpret_cast<unsigned char*>(&seed), sizeof(seed)) != 1)
    throw std::runtime_error("no random seed: OpenSSL's RAND_bytes failed");
  return seed;
}

size_t draw_variant(const Lab& lab, uint64_t seed, const std::optional<std::string>& cause_id) {
  const uint64_t r = splitmix(seed ^ fnv1a(lab.name));
  size_t cause = r % lab.causes.size();
  if (cause_id) {
    const LabCause* named = lab.find_cause(*cause_id);
    if (!named) {
      std::string ids;
      for (const LabCause& c : lab.causes) ids += " " + c.id;
      throw std::runtime_error("lab " + lab.name + " has no cause " + *cause_id + " (causes:" + ids + ")");
    }
    cause = static_cast<size_t>(named - lab.causes.data());
  }
  // One draw over every combination is one draw of each value: each name's values are equally likely.
  size_t index =
      static_cast<size_t>(splitmix(r ^ 0x5eed5eed5eed5eedULL) % lab.causes[cause].value_sets.size());
  for (size_t c = 0; c < cause; ++c) index += lab.causes[c].value_sets.size();
  return index;
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
  size_t within = index;
  const LabCause* cause = nullptr;
  for (const LabCause& c : lab.causes) {
    if (within < c.value_sets.size()) {
      cause = &c;
      break;
    }
    within -= c.value_sets.size();
  }
  if (!cause)
    throw std::runtime_error(lab.file + ": variant " + std::to_string(index) +
                             ": the lab has variants 0 to " + std::to_string(lab.variant_count() - 1));
  v.cause_id = cause->id;
  v.site = cause->site;
  v.values = cause->value_sets[within];
  // A drawn object gives several values that go together ({"rank": 1, "next": 2}): each is a name too.
  nlohmann::json names = v.values;
  for (const auto& [name, value] : v.values.items()) {
    if (value.is_object()) names.update(value);
  }
  const nlohmann::json& doc = cause->doc;
  try {
    v.jobs = substitute_variant(doc.at("jobs"), names);
    v.answer = substitute_variant(doc.at("answer"), names);
    v.hints = substitute_variant(doc.at("hints"), names);
    v.evidence = substitute_variant(doc.value("evidence", nlohmann::json::array()), names);
    v.explanation = substitute_variant(doc.value("explanation", std::string()), names);
  } catch (const std::exception& e) {
    throw std::runtime_error(lab.file + ": cause " + cause->id + ", variant " + std::to_string(index) + ": " +
                             e.what());
  }
  return v;
}

}  // namespace ncclfi::cli::lab
