#include "lab_grading.h"

#include <algorithm>

namespace ncclfi::cli::lab {

const std::vector<CauseInfo>& cause_vocabulary() {
  static const std::vector<CauseInfo> causes = {
      {"nic", "a NIC (or its port or cable) stopped working: its queue pairs ran out of retries"},
      {"link_flap", "a link that goes down and comes back: failures now and then, restarts help for a while"},
      {"congestion", "a congested switch or link: slower transfers behind that link, no error"},
      {"slow_link",
       "a network link running below its rate (fewer lanes, a lower speed): steadily slow, no error"},
      {"link_corruption", "a link that alters data (bit errors the link's checks did not catch)"},
      {"nvlink", "a failed NVLink between GPUs of one node"},
      {"pcie", "a PCIe link trained below its width or speed: less bandwidth for everything on that node"},
      {"hung_rank", "one rank stopped making progress (a hang, a stopped process); the others wait for it"},
      {"dead_rank", "a rank's process (or its node) died; its peers lose the connection"},
      {"timeout_config",
       "timeouts set so that a hang is never detected (off, or longer than the job's limit)"},
      {"bootstrap", "the job failed while its ranks were connecting, before the first collective"},
      {"remote_error", "ncclRemoteError: a peer or the network failed (look at the other side)"},
      {"system_error", "ncclSystemError: a system call on this rank failed (sockets, memory, files)"},
      {"internal_error", "ncclInternalError: a check inside NCCL or its plugin failed (a bug to report)"},
      {"memory", "a node's memory (GPU or host) returns wrong data: what it sends and receives can be wrong"},
      {"none", "nothing is wrong"},
  };
  return causes;
}

bool is_known_cause(const std::string& cause) {
  const auto& causes = cause_vocabulary();
  return std::any_of(causes.begin(), causes.end(), [&](const CauseInfo& c) { return c.name == cause; });
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

Grade grade(const AnswerKey& key, const StudentAnswer& answer, int hints_used) {
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
  } else if (const auto it = key.misconceptions.find(answer.cause); it != key.misconceptions.end()) {
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
  g.hint_penalty = kHintPenalty * std::max(0, hints_used);
  g.score = std::max(0, g.rank_points + g.cause_points + g.detail_points - g.hint_penalty);
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
          {"feedback", g.feedback}};
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
