// The one regular-expression engine for rank output: RE2, which matches in time linear in the line
// and bounded memory, with no recursion on the line. std::regex (ECMAScript) backtracks: one 50 KB
// line of digits overflowed its stack, and a scenario pattern like (a*)*b held the harness at 100% CPU
// past its deadline. Every built-in classifier, every scenario `log_patterns` / `expect.log_matches`
// pattern and the launchers' line prefixes go through LineRegex. docs/robustness.md lists the limits.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace re2 {
class RE2;
}

namespace ncclfi::harness {

// Lines are classified on their first kMaxLineBytes bytes: NCCL, PyTorch and launcher lines are far
// shorter, and a rank that prints one endless line must cost the harness bounded memory and time.
constexpr size_t kMaxLineBytes = 16 << 10;
// Patterns are short texts written by people; a longer one is a mistake or an attack (deep nesting).
constexpr size_t kMaxPatternBytes = 1024;

class LineRegex {
 public:
  // Compiles `pattern` (RE2 syntax: Perl-like, no backreferences or lookaround). Throws
  // std::invalid_argument with check()'s text when it does not compile.
  explicit LineRegex(std::string_view pattern);

  // Why `pattern` cannot be used ("too long", RE2's error), or nullopt when it can.
  static std::optional<std::string> check(std::string_view pattern);

  // Whether the pattern occurs in the first kMaxLineBytes of `line`. With `group1`, the first
  // capture group's text of the match.
  bool search(std::string_view line, std::string* group1 = nullptr) const;
  // The pattern as written.
  const std::string& pattern() const;

 private:
  std::shared_ptr<const re2::RE2> re_;
};

}  // namespace ncclfi::harness
