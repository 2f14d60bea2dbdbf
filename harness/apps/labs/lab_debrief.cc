#include "lab_debrief.h"

#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>
#include <sstream>

#include "lab_grading.h"
#include "ncclfi/bounded_input.h"

namespace ncclfi::cli::lab {
namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxFilesSearched = 256;
constexpr uint64_t kMaxFileBytes = 8ULL << 20;
constexpr size_t kMaxQuotedChars = 240;
constexpr int kQuoteThreshold = 4;  // plain words a line must share with the entry, without a log token
constexpr size_t kMaxQuotesPerFile = 2;

// Words of a text: runs of letters, digits and '_'.
std::vector<std::string> words_of(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  for (const char c : text + " ") {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      word += c;
    } else if (!word.empty()) {
      words.push_back(word);
      word.clear();
    }
  }
  return words;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// A log's own token, which names one thing: IBV_WC_RETRY_EXC_ERR, ncclSystemError, WARN (not NCCL,
// which every line of a log says).
bool technical(const std::string& w) {
  if (w == "NCCL" || w.size() < 3) return false;
  if (w.find('_') != std::string::npos) return true;
  const bool inner_upper = std::any_of(w.begin() + 1, w.end(), [](char c) { return std::isupper(c); });
  return inner_upper;
}

bool common_word(const std::string& w) {
  static const std::set<std::string> kCommon = {
      "the",    "and",   "with",   "from", "that", "this",  "than",  "then",  "only", "every", "other",
      "others", "after", "before", "each", "when", "which", "their", "there", "into", "about", "same",
      "both",   "what",  "were",   "have", "does", "once",  "some",  "more",  "less", "most",  "them",
      "they",   "over",  "under",  "just", "also", "its",   "for",   "was",   "are",  "not",   "one",
      "all",    "but",   "any",    "out",  "log",  "job",   "lines", "line",  "file"};
  return kCommon.count(w) > 0;
}

struct Terms {
  std::set<std::string> strong, weak;  // lower case; strong ones include "rank 3" (a rank the entry names)
};

bool all_digits(const std::string& w) {
  return !w.empty() && std::all_of(w.begin(), w.end(), [](char c) { return std::isdigit(c); });
}

// "rank 3" for each rank a text names ("rank 3", "ranks 3"): the culprit, in every lab's evidence.
std::set<std::string> ranks_named(const std::vector<std::string>& words) {
  std::set<std::string> out;
  for (size_t i = 0; i + 1 < words.size(); ++i) {
    const std::string w = lower(words[i]);
    if ((w == "rank" || w == "ranks") && all_digits(words[i + 1])) out.insert("rank " + words[i + 1]);
  }
  return out;
}

Terms terms_of(const std::string& description) {
  Terms t;
  const auto words = words_of(description);
  t.strong = ranks_named(words);
  for (const auto& w : words) {
    if (technical(w)) {
      t.strong.insert(lower(w));
    } else if (all_digits(w) || (w.size() >= 3 && !common_word(lower(w)))) {
      t.weak.insert(lower(w));
    }
  }
  return t;
}

// How much a line shares with the entry's terms; 0 when too little to quote it (no log token and fewer
// than kQuoteThreshold plain words).
int line_score(const Terms& terms, const std::string& line) {
  int strong = 0, weak = 0;
  const auto words = words_of(line);
  for (const auto& r : ranks_named(words)) strong += terms.strong.count(r) ? 1 : 0;
  std::set<std::string> seen;
  for (const auto& w : words) {
    const std::string l = lower(w);
    if (!seen.insert(l).second) continue;
    strong += terms.strong.count(l) ? 1 : 0;
    weak += terms.weak.count(l) ? 1 : 0;
  }
  return strong > 0 || weak >= kQuoteThreshold ? 3 * strong + weak : 0;
}

// The workspace's files a path spec names (relative paths, sorted).
void add_files(const fs::path& workspace, const std::string& spec, std::vector<std::string>& files) {
  std::error_code ec;
  const fs::path path = workspace / spec;
  auto add = [&](const fs::path& p) {
    if (files.size() < kMaxFilesSearched) files.push_back(fs::relative(p, workspace, ec).string());
  };
  if (spec.find('*') != std::string::npos) {
    const fs::path dir = path.parent_path();
    if (!fs::is_directory(dir, ec)) return;
    std::vector<fs::path> found;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      if (e.is_regular_file(ec) && ::fnmatch(path.filename().c_str(), e.path().filename().c_str(), 0) == 0)
        found.push_back(e.path());
    }
    std::sort(found.begin(), found.end());
    for (const auto& f : found) add(f);
  } else if (fs::is_directory(path, ec)) {
    std::vector<fs::path> found;
    for (const auto& e : fs::recursive_directory_iterator(path, ec)) {
      if (e.is_regular_file(ec)) found.push_back(e.path());
    }
    std::sort(found.begin(), found.end());
    for (const auto& f : found) add(f);
  } else if (fs::is_regular_file(path, ec)) {
    add(path);
  }
}

// "training/rank-2.log and step_times.csv: what" -> ({"training/rank-2.log", "step_times.csv"}, "what").
// An entry whose head names no file is searched in every job's files.
std::pair<std::vector<std::string>, std::string> split_entry(const std::string& entry) {
  const auto colon = entry.find(": ");
  if (colon != std::string::npos) {
    std::vector<std::string> specs;
    std::istringstream head(entry.substr(0, colon));
    for (std::string token; head >> token;) {
      if (token.find('/') != std::string::npos || token.find('.') != std::string::npos)
        specs.push_back(token);
    }
    if (!specs.empty()) return {specs, entry.substr(colon + 2)};
  }
  return {{}, entry};
}

}  // namespace

std::vector<EvidenceQuote> find_evidence(const std::string& workspace, const std::string& entry,
                                         size_t max_quotes) {
  const fs::path ws(workspace);
  auto [specs, description] = split_entry(entry);
  std::vector<std::string> files;
  if (specs.empty()) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(ws, ec)) {
      if (e.is_directory(ec)) add_files(ws, e.path().filename().string() + "/", files);  // the jobs' files
    }
  }
  for (const auto& spec : specs) add_files(ws, spec, files);
  const Terms terms = terms_of(description);
  struct Scored {
    int score;
    EvidenceQuote quote;
  };
  std::vector<Scored> scored;
  for (const auto& file : files) {
    std::string text;
    if (!read_regular_file((ws / file).string(), kMaxFileBytes, text).empty()) continue;
    std::vector<Scored> in_file;
    std::istringstream lines(text);
    int number = 0;
    for (std::string line; std::getline(lines, line);) {
      ++number;
      const int score = line_score(terms, line);
      if (score == 0) continue;
      if (line.size() > kMaxQuotedChars) line = line.substr(0, kMaxQuotedChars) + " ...";
      in_file.push_back({score, {file, number, line}});
    }
    // The best lines of each file, the first of equals (where it started).
    std::stable_sort(in_file.begin(), in_file.end(),
                     [](const Scored& a, const Scored& b) { return a.score > b.score; });
    if (in_file.size() > kMaxQuotesPerFile) in_file.resize(kMaxQuotesPerFile);
    scored.insert(scored.end(), in_file.begin(), in_file.end());
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const Scored& a, const Scored& b) { return a.score > b.score; });
  std::vector<EvidenceQuote> quotes;
  for (const auto& s : scored) {
    if (quotes.size() >= max_quotes) break;
    quotes.push_back(s.quote);
  }
  return quotes;
}

std::string final_answer_reason(const nlohmann::json& progress, const ClassSettings& settings,
                                int64_t now_ns) {
  const auto& attempts = progress.value("attempts", nlohmann::json::array());
  const AttemptSummary s = summarize_attempts(attempts);
  if (s.right) return "you answered right at attempt " + std::to_string(s.right_attempt + 1);
  if (attempts.size() >= settings.attempts)
    return "you have used all " + std::to_string(settings.attempts) + " attempts";
  if (!past_deadline(settings, now_ns).empty()) return "the deadline (" + settings.deadline + ") has passed";
  return "";
}

namespace {

std::string meaning_of(const std::string& cause) {
  for (const auto& c : cause_vocabulary())
    if (c.name == cause) return c.meaning;
  return "";
}

std::string answer_text(const nlohmann::json& a) {
  std::string text;
  for (const auto& r : a.value("ranks", nlohmann::json::array())) text += "--rank " + r.dump() + " ";
  text += "--cause " + a.value("cause", std::string("?"));
  const nlohmann::json details = a.value("details", nlohmann::json::object());  // items() needs it alive
  for (const auto& [k, v] : details.items())
    text += " --detail " + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  return text;
}

}  // namespace

void write_student_debrief(std::ostream& out, const std::string& workspace, const nlohmann::json& key,
                           const nlohmann::json& progress, const std::string& final_reason) {
  const AnswerKey truth = answer_key_from_json(key.at("answer"));
  out << "# Debrief: " << key.value("title", key.value("lab", std::string())) << "\n\n"
      << "Your answer is final: " << final_reason << ".\n\n## The answer\n\ncause " << truth.cause << " ("
      << meaning_of(truth.cause) << ")";
  if (truth.ranks) {
    out << ", rank(s)";
    for (const int r : *truth.ranks) out << " " << r;
  }
  for (const auto& [k, v] : truth.details) out << ", " << k << "=" << v;
  out << "\n\n" << key.value("explanation", std::string()) << "\n\n## What in your workspace points to it\n";
  for (const auto& e : key.value("evidence", nlohmann::json::array())) {
    if (!e.is_string()) continue;
    out << "\n- " << e.get<std::string>() << "\n";
    const auto quotes = find_evidence(workspace, e.get<std::string>());
    if (quotes.empty()) out << "    (no single line to quote: read the files it names)\n";
    for (const auto& q : quotes) out << "    " << q.file << ":" << q.line << ": " << q.text << "\n";
  }
  out << "\n## Your attempts\n\n";
  const auto& attempts = progress.value("attempts", nlohmann::json::array());
  if (attempts.empty()) out << "none\n";
  int n = 0;
  for (const auto& a : attempts) {
    const auto& g = a.value("grade", nlohmann::json::object());
    const bool right = g.value("right", false);
    out << ++n << ". " << answer_text(a) << ": " << (right ? "right" : "wrong") << ", score "
        << g.value("score", 0) << "\n";
    if (right) continue;
    const std::string cause = a.value("cause", std::string());
    if (cause != truth.cause) {
      const auto it = truth.misconceptions.find(cause);
      if (it != truth.misconceptions.end() && misconception_problem(truth.cause, cause, it->second).empty()) {
        out << "   " << cause << ": " << it->second << "\n";
      } else {
        out << "   " << cause << " means " << meaning_of(cause)
            << "; compare what that would have left with the evidence above.\n";
      }
    }
    if (truth.ranks) {
      std::set<int> named;
      for (const auto& r : a.value("ranks", nlohmann::json::array())) named.insert(r.get<int>());
      if (named != *truth.ranks)
        out << "   the rank(s) you named were not all where the fault was: ranks that wait on a faulty peer "
               "show the symptom too; the first problem, or the odd measurement, is the culprit's.\n";
    }
  }
  const AttemptSummary s = summarize_attempts(attempts);
  out << "\nScore " << s.score << "/100 (first attempt " << s.first_score << ", best " << s.best_score
      << "), " << progress.value("hints_used", 0) << " hint(s) used.\n";
}

}  // namespace ncclfi::cli::lab
