// The allow-list of hosts (host_allow.h). fnmatch(3) is the glob matcher: the same globs the shell and
// Slurm's users already write.
#include "ncclfi/host_allow.h"

#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "ncclfi/bounded_input.h"
#include "ncclfi/event_log.h"

namespace ncclfi {
namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

bool is_separator(char c) {
  return c == ',' || std::isspace(static_cast<unsigned char>(c)) != 0;
}

void add_entries(std::string_view text, AllowList& list) {
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '#') {  // a comment runs to the end of its line
      while (i < text.size() && text[i] != '\n') ++i;
      continue;
    }
    if (is_separator(text[i])) {
      ++i;
      continue;
    }
    const size_t start = i;
    while (i < text.size() && !is_separator(text[i]) && text[i] != '#') ++i;
    list.patterns.emplace_back(text.substr(start, i - start));
  }
}

}  // namespace

bool AllowList::allows(const std::string& host) const {
  if (!configured) return true;
  if (!problem.empty()) return false;
  const std::string full = lower(host);
  const std::string short_name = full.substr(0, full.find('.'));
  return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& p) {
    const std::string pattern = lower(p);
    return fnmatch(pattern.c_str(), full.c_str(), 0) == 0 ||
           fnmatch(pattern.c_str(), short_name.c_str(), 0) == 0;
  });
}

std::string AllowList::describe() const {
  if (!problem.empty()) return problem;
  std::string text;
  for (const auto& p : patterns) text += (text.empty() ? "" : ", ") + p;
  return text.empty() ? "(empty)" : text;
}

AllowList parse_allow_list(std::string_view text) {
  AllowList list;
  list.configured = true;
  add_entries(text, list);
  return list;
}

AllowList read_allow_list_file(const std::string& path) {
  AllowList list;
  list.configured = true;
  std::string text;
  if (const std::string problem = read_regular_file(path, kMaxInputFileBytes, text); !problem.empty()) {
    list.problem = "the allow-list file " + path + " is " + problem;
    return list;
  }
  add_entries(text, list);
  return list;
}

AllowList allow_list_from_env() {
  AllowList list;
  if (const char* file = std::getenv("NCCLFI_ALLOWED_HOSTS_FILE"); file != nullptr)
    list = read_allow_list_file(file);
  if (const char* inline_list = std::getenv("NCCLFI_ALLOWED_HOSTS"); inline_list != nullptr) {
    list.configured = true;
    add_entries(inline_list, list);
  }
  return list;
}

bool host_allowed(std::string* warning, const std::string& host) {
  const AllowList list = allow_list_from_env();
  const std::string name = host.empty() ? host_name() : host;
  if (list.allows(name)) return true;
  if (warning != nullptr) {
    *warning = "ncclfi: host '" + name + "' is not in the allowed hosts (" + list.describe() +
               "): no fault is injected here";
  }
  return false;
}

}  // namespace ncclfi
