#include "lab_grading.h"

#include <algorithm>
#include <cctype>

namespace ncclfi::cli::lab {

const std::vector<CauseInfo>& cause_vocabulary() {
  // The telltales: the cause's own words, and those an explanation of it would use. A feedback text
  // for a wrong cause that holds one of the right cause's telltales describes the answer.
  static const std::vector<CauseInfo> causes = {
      {"nic",
       "a NIC (or its port or cable) stopped working: its queue pairs ran out of retries",
       {"nic", "hca", "network card", "network adapter", "network-transport", "port error", "cable"}},
      {"link_flap",
       "a link that goes down and comes back: failures now and then, restarts help for a while",
       {"flap", "comes back", "came back", "down again", "now and then", "intermittent"}},
      {"congestion",
       "a congested switch or link: slower transfers behind that link, no error",
       {"congest", "jitter", "vary", "varies", "varying", "switch"}},
      {"slow_link",
       "a network link running below its rate (fewer lanes, a lower speed): steadily slow, no error",
       {"slow link", "below its rate", "fewer lanes", "lower speed", "steadily slow"}},
      {"link_corruption",
       "a link that alters data (bit errors the link's checks did not catch)",
       {"corrupt", "bit error", "bit flip", "alter", "wrong data", "but wrong", "was wrong"}},
      {"nvlink", "a failed NVLink between GPUs of one node", {"nvlink", "cuda"}},
      {"pcie",
       "a PCIe link trained below its width or speed: less bandwidth for everything on that node",
       {"pcie", "pci express", "downgrad", "steady factor", "width", "lanes"}},
      {"hung_rank",
       "one rank stopped making progress (a hang, a stopped process); the others wait for it",
       {"hung", "hang", "stopped making progress", "stopped process"}},
      {"dead_rank",
       "a rank's process (or its node) died; its peers lose the connection",
       {"dead", "died", "dies", "killed", "signal", "sigkill", "sigterm", "preempt"}},
      {"timeout_config",
       "timeouts set so that a hang is never detected (off, or longer than the job's limit)",
       {"timeout", "watchdog", "never detected", "never noticed", "detect"}},
      {"bootstrap",
       "the job failed while its ranks were connecting, before the first collective",
       {"bootstrap", "connect", "before the first", "as far as a collective", "collective ran", "stage"}},
      {"remote_error",
       "ncclRemoteError: a peer or the network failed (look at the other side)",
       {"ncclremoteerror", "remote error"}},
      {"system_error",
       "ncclSystemError: a system call on this rank failed (sockets, memory, files)",
       {"ncclsystemerror", "system error", "system call"}},
      {"internal_error",
       "ncclInternalError: a check inside NCCL or its plugin failed (a bug to report)",
       {"ncclinternalerror", "internal error"}},
      {"memory",
       "a node's memory (GPU or host) returns wrong data: what it sends and receives can be wrong",
       {"memory", "ecc", "dram", "hbm"}},
      {"none", "nothing is wrong", {"nothing is wrong"}},
  };
  return causes;
}

bool is_known_cause(const std::string& cause) {
  const auto& causes = cause_vocabulary();
  return std::any_of(causes.begin(), causes.end(), [&](const CauseInfo& c) { return c.name == cause; });
}

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// Whether `word` starts a word of `text` (both lower case): "congest" is in "congestion", not in
// "decongest".
bool has_word_start(const std::string& text, const std::string& word) {
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    if (at == 0 || !std::isalnum(static_cast<unsigned char>(text[at - 1]))) return true;
  }
  return false;
}

}  // namespace

std::string misconception_problem(const std::string& right_cause, const std::string& wrong_cause,
                                  const std::string& text) {
  // A lab whose variants have different causes keeps feedback for each: the one for this variant's own
  // cause is never shown in it.
  if (wrong_cause == right_cause) return "";
  const auto& causes = cause_vocabulary();
  const auto it =
      std::find_if(causes.begin(), causes.end(), [&](const CauseInfo& c) { return c.name == right_cause; });
  if (it == causes.end()) return "";
  const std::string said = lower(text);
  std::vector<std::string> words = it->telltales;
  words.push_back(lower(it->name));
  std::string spaced = lower(it->name);
  std::replace(spaced.begin(), spaced.end(), '_', ' ');
  words.push_back(spaced);
  for (const auto& word : words) {
    if (has_word_start(said, word))
      return "the feedback for " + wrong_cause + " says \"" + word + "\", which describes the answer (" +
             right_cause + ": " + it->meaning + "); say what " + wrong_cause +
             " would have left that the evidence does not show";
  }
  if (said.find(lower(it->meaning)) != std::string::npos)
    return "the feedback for " + wrong_cause + " quotes the meaning of the answer " + right_cause;
  return "";
}

namespace {

std::string rank_feedback(const std::set<int>& key, const std::set<int>& answer, int* points) {
  if (answer == key) {
    *points = kRankPoints;
    return "The rank is right.";
  }
  std::vector<int> common;
  std::set_intersection(key.begin(), key.end(), answer.begin(), answer.end(), std::back_inserter(common));
  if (!common.empty()) {
    *points = kRankPoints / 2;
    return answer.size() > key.size()
               ? "Some of the ranks you named are right, but not all of them are where the fault was: ranks "
                 "that only wait for a peer show the same symptom."
               : "Some of the ranks you named are right, but the fault touches more ranks than you named.";
  }
  *points = 0;
  return "None of the ranks you named is where the fault was. Ranks that wait on a faulty peer show the "
         "symptom too: look for the rank whose log shows the first problem, or whose link measured "
         "differently from the others.";
}

}  // namespace

Grade grade(const AnswerKey& key, const StudentAnswer& answer, const AttemptContext& before) {
  Grade g;
  bool ranks_right = true;
  if (key.ranks) {
    g.feedback.push_back(rank_feedback(*key.ranks, answer.ranks, &g.rank_points));
    ranks_right = g.rank_points == kRankPoints;
  } else {
    g.rank_points = kRankPoints;  // not asked: nothing to get wrong
  }
  const int cause_points = key.details.empty() ? kCausePoints + kDetailPoints : kCausePoints;
  const bool cause_right = answer.cause == key.cause;
  if (cause_right) {
    g.cause_points = cause_points;
    g.feedback.push_back("The cause is right.");
  } else if (const auto it = key.misconceptions.find(answer.cause);
             it != key.misconceptions.end() &&
             misconception_problem(key.cause, it->first, it->second).empty()) {
    // (A text that would describe the answer is never shown, even from a key written before the check.)
    g.feedback.push_back("The cause is not right: " + it->second);
  } else {
    g.feedback.push_back(
        "The cause is not right. Check what the symptom rules out: was there an error, did data change, did "
        "every rank slow down or stop, and when did it start?");
  }
  bool details_right = true;
  if (!key.details.empty()) {
    int right = 0;
    for (const auto& [name, value] : key.details) {
      const auto it = answer.details.find(name);
      if (it != answer.details.end() && it->second == value) {
        ++right;
      } else {
        details_right = false;
        g.feedback.push_back(it == answer.details.end()
                                 ? "Name the " + name + " too (--detail " + name + "=...)."
                                 : "The " + name + " you named is not the one in the logs.");
      }
    }
    g.detail_points = kDetailPoints * right / static_cast<int>(key.details.size());
  }
  g.right = ranks_right && cause_right && details_right;
  g.hint_penalty = kHintPenalty * std::max(0, before.hints_used);
  g.wrong_attempt_penalty = std::max(0, before.wrong_penalty) * std::max(0, before.wrong_attempts_before);
  g.score = std::max(
      0, g.rank_points + g.cause_points + g.detail_points - g.hint_penalty - g.wrong_attempt_penalty);
  if (!g.right) g.score = std::min(g.score, kRankPoints + kCausePoints + kDetailPoints - 1);
  return g;
}

nlohmann::json to_json(const Grade& g) {
  return {{"right", g.right},
          {"score", g.score},
          {"rank_points", g.rank_points},
          {"cause_points", g.cause_points},
          {"detail_points", g.detail_points},
          {"hint_penalty", g.hint_penalty},
          {"wrong_attempt_penalty", g.wrong_attempt_penalty},
          {"feedback", g.feedback}};
}

namespace {

// An attempt's grade field as recorded (a verified progress has "right" and "score"; lab_progress.cc).
// (An attempt of another shape reads as wrong and 0, never throws.)
const nlohmann::json* attempt_grade(const nlohmann::json& a) {
  if (!a.is_object() || !a.contains("grade")) return nullptr;
  const nlohmann::json& grade = a.at("grade");
  return grade.is_object() ? &grade : nullptr;
}
bool attempt_right(const nlohmann::json& a) {
  const nlohmann::json* grade = attempt_grade(a);
  return grade != nullptr && grade->value("right", false);
}
int attempt_score(const nlohmann::json& a) {
  const nlohmann::json* grade = attempt_grade(a);
  return grade != nullptr ? grade->value("score", 0) : 0;
}

}  // namespace

int wrong_attempts(const nlohmann::json& attempts) {
  int wrong = 0;
  for (const auto& a : attempts) wrong += attempt_right(a) ? 0 : 1;
  return wrong;
}

AttemptSummary summarize_attempts(const nlohmann::json& attempts) {
  AttemptSummary s;
  s.attempts = static_cast<int>(attempts.size());
  for (size_t i = 0; i < attempts.size(); ++i) {
    const auto& a = attempts[i];
    const int score = attempt_score(a);
    if (i == 0) s.first_score = score;
    s.best_score = std::max(s.best_score, score);
    if (!attempt_right(a)) {
      ++s.wrong_attempts;
    } else if (!s.right) {
      s.right = true;
      s.right_attempt = static_cast<int>(i);
      s.score = score;
    }
  }
  if (!s.right) s.score = s.best_score;
  return s;
}

AnswerKey answer_key_from_json(const nlohmann::json& doc) {
  AnswerKey key;
  key.cause = doc.at("cause").get<std::string>();
  if (doc.contains("ranks") && !doc.at("ranks").is_null()) key.ranks = doc.at("ranks").get<std::set<int>>();
  if (doc.contains("details")) {
    for (const auto& [k, v] : doc.at("details").items())
      key.details[k] = v.is_string() ? v.get<std::string>() : v.dump();
  }
  if (doc.contains("misconceptions"))
    key.misconceptions = doc.at("misconceptions").get<std::map<std::string, std::string>>();
  return key;
}

nlohmann::json to_json(const AnswerKey& key) {
  nlohmann::json doc = {
      {"cause", key.cause}, {"details", key.details}, {"misconceptions", key.misconceptions}};
  doc["ranks"] = key.ranks ? nlohmann::json(*key.ranks) : nlohmann::json(nullptr);
  return doc;
}

}  // namespace ncclfi::cli::lab
