#include "line_regex.h"

#include <re2/re2.h>

#include <stdexcept>

namespace ncclfi::harness {
namespace {

RE2::Options options() {
  RE2::Options o;
  o.set_log_errors(false);  // the error goes into the caller's message, not to stderr
  return o;
}

std::shared_ptr<const re2::RE2> compile(std::string_view pattern, std::string* error) {
  if (pattern.size() > kMaxPatternBytes) {
    *error = "longer than " + std::to_string(kMaxPatternBytes) + " bytes";
    return nullptr;
  }
  auto re = std::make_shared<const re2::RE2>(re2::StringPiece(pattern.data(), pattern.size()), options());
  if (!re->ok()) {
    *error = re->error();
    return nullptr;
  }
  return re;
}

}  // namespace

LineRegex::LineRegex(std::string_view pattern) {
  std::string error;
  re_ = compile(pattern, &error);
  if (!re_) throw std::invalid_argument(error);
}

std::optional<std::string> LineRegex::check(std::string_view pattern) {
  std::string error;
  if (compile(pattern, &error)) return std::nullopt;
  return error;
}

bool LineRegex::search(std::string_view line, std::string* group1) const {
  const std::string_view head = line.substr(0, kMaxLineBytes);
  const re2::StringPiece text(head.data(), head.size());
  if (group1 == nullptr || re_->NumberOfCapturingGroups() < 1) return RE2::PartialMatch(text, *re_);
  return RE2::PartialMatch(text, *re_, group1);
}

const std::string& LineRegex::pattern() const {
  return re_->pattern();
}

}  // namespace ncclfi::harness
