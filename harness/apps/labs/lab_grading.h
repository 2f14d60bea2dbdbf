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
  // The words that name this cause in plain text (lower case, matched at word starts): feedback on a
  // wrong answer may not use them when this cause is the right one (misconception_problem).
  std::vector<std::string> telltales;
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
  int score = 0;  // 0-100, after the hint and wrong-attempt penalties
  int rank_points = 0, cause_points = 0, detail_points = 0, hint_penalty = 0, wrong_attempt_penalty = 0;
  std::vector<std::string> feedback;
};

inline constexpr int kRankPoints = 50;
inline constexpr int kCausePoints = 40;
inline constexpr int kDetailPoints = 10;         // given to the cause when the key has no details
inline constexpr int kHintPenalty = 10;          // per hint used
inline constexpr int kWrongAttemptPenalty = 15;  // per wrong attempt before this one (a class may set it)

// What came before this answer: the hints used and the wrong attempts (each costs `wrong_penalty`), so
// that blind guessing costs points: four guesses, the fourth right, score 55, not 100.
struct AttemptContext {
  int hints_used = 0;
  int wrong_attempts_before = 0;
  int wrong_penalty = kWrongAttemptPenalty;
};

// Right: every rank named exactly (when asked), the cause and every detail. Partial credit: half the
// rank points for some but not all ranks right; the cause and the details count on their own. The
// penalties come off, never below 0.
Grade grade(const AnswerKey& key, const StudentAnswer& answer, const AttemptContext& before);
inline Grade grade(const AnswerKey& key, const StudentAnswer& answer, int hints_used) {
  return grade(key, answer, AttemptContext{hints_used, 0, kWrongAttemptPenalty});
}

// A student's attempts (progress.json's "attempts", each with its "grade") summed up for the gradebook
// and the debrief. score: the first right attempt's score, else the best.
struct AttemptSummary {
  int attempts = 0, wrong_attempts = 0;
  int first_score = 0, best_score = 0, score = 0;
  bool right = false;
  int right_attempt = -1;  // index of the first right attempt, -1 when none
};
AttemptSummary summarize_attempts(const nlohmann::json& attempts);
// How many of `attempts` were wrong (the count the next attempt's penalty is taken for).
int wrong_attempts(const nlohmann::json& attempts);

// Why `text`, the feedback for the wrong cause `wrong_cause` when `right_cause` is the truth, may not be
// shown ("" when it may): it names the right cause or uses the words that describe it. Feedback for a
// wrong cause says what THAT cause would have left that the evidence does not show, never what the
// right one is.
std::string misconception_problem(const std::string& right_cause, const std::string& wrong_cause,
                                  const std::string& text);

nlohmann::json to_json(const Grade& grade);
AnswerKey answer_key_from_json(const nlohmann::json& doc);
nlohmann::json to_json(const AnswerKey& key);

}  // namespace ncclfi::cli::lab
