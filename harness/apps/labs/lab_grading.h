// Grading a lab answer against its key: pure logic, no files. One place decides the score, whether an
// answer is right, and the feedback (which teaches without naming the answer).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ncclfi::cli::lab {

// The vocabulary of causes (`ncclfi lab causes`): name and what it means.
struct CauseInfo {
  std::string name;
  std::string meaning;
};
const std::vector<CauseInfo>& cause_vocabulary();
bool is_known_cause(const std::string& cause);

// The truth of one variant.
struct AnswerKey {
  std::string cause;
  std::optional<std::set<int>> ranks;          // nullopt: the lab does not ask which rank
  std::map<std::string, std::string> details;  // every one must be named right
  // Feedback for a wrong cause the student may give, by that cause ("hung_rank": "a hung rank ...").
  std::map<std::string, std::string> misconceptions;
};

struct StudentAnswer {
  std::set<int> ranks;
  std::string cause;
  std::map<std::string, std::string> details;
};

struct Grade {
  bool right = false;
  int score = 0;  // 0-100, after the hint penalty
  int rank_points = 0, cause_points = 0, detail_points = 0, hint_penalty = 0;
  std::vector<std::string> feedback;
};

inline constexpr int kRankPoints = 50;
inline constexpr int kCausePoints = 40;
inline constexpr int kDetailPoints = 10;  // given to the cause when the key has no details
inline constexpr int kHintPenalty = 10;   // per hint used

// Right: every rank named exactly (when asked), the cause and every detail. Partial credit: half the
// rank points for some but not all ranks right; the cause and the details count on their own.
Grade grade(const AnswerKey& key, const StudentAnswer& answer, int hints_used);

nlohmann::json to_json(const Grade& grade);
AnswerKey answer_key_from_json(const nlohmann::json& doc);
nlohmann::json to_json(const AnswerKey& key);

}  // namespace ncclfi::cli::lab
