#include "cli_suggest.h"

#include <algorithm>
#include <cctype>

namespace ncclfi::cli {

using harness::edit_distance;

std::optional<std::string> closest_name(const std::string& typed,
                                        const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  size_t best_distance = 0;
  std::vector<std::string> prefixed;
  for (const auto& c : candidates) {
    if (c.size() > typed.size() && c.compare(0, typed.size(), typed) == 0) prefixed.push_back(c);
    const size_t d = edit_distance(typed, c);
    if (!best || d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  // A typo: at most a third of the longer name wrong (and at least one edit allowed), so "--jsno"
  // finds "--json" but "--x" does not find "--out".
  const size_t allowed = std::max<size_t>(1, std::max(typed.size(), best ? best->size() : 0) / 3);
  if (best && best_distance <= allowed) return best;
  if (prefixed.size() == 1) return prefixed.front();
  return std::nullopt;
}

namespace {

bool is_option_token(const std::string& token) {
  // "-5" or "-0.5" is a value (a negative number), not an option.
  return token.size() > 1 && token[0] == '-' && std::isdigit(static_cast<unsigned char>(token[1])) == 0 &&
         token[1] != '.';
}

// Options fall through to the parent (main() sets fallthrough): a global option is valid anywhere.
const CLI::Option* find_option(const CLI::App* app, const std::string& name) {
  for (; app != nullptr; app = app->get_parent()) {
    if (const CLI::Option* opt = app->get_option_no_throw(name)) return opt;
  }
  return nullptr;
}

std::vector<std::string> option_names(const CLI::App* app) {
  std::vector<std::string> names;
  for (; app != nullptr; app = app->get_parent()) {
    for (const CLI::Option* opt : app->get_options()) {
      for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
      for (const auto& s : opt->get_snames()) names.push_back("-" + s);
    }
  }
  return names;
}

std::string command_path(const CLI::App* app) {
  std::string path;
  for (; app != nullptr; app = app->get_parent()) path = app->get_name() + (path.empty() ? "" : " " + path);
  return path;
}

bool takes_positionals(const CLI::App& app) {
  for (const CLI::Option* opt : app.get_options()) {
    if (!opt->nonpositional()) return true;
  }
  return false;
}

std::string with_suggestion(std::string message, const std::optional<std::string>& suggestion) {
  if (suggestion) message += " Did you mean '" + *suggestion + "'?";
  return message;
}

}  // namespace

std::optional<std::string> unknown_name_error(const CLI::App& app, const std::vector<std::string>& args) {
  const CLI::App* current = &app;
  bool value_expected = false;
  for (const auto& token : args) {
    if (token == "--") break;
    const bool option = is_option_token(token);
    if (value_expected && !option) {
      value_expected = false;
      continue;
    }
    value_expected = false;
    if (option) {
      // --name=value, --name, -x; a cluster of short flags (-qv) is left to CLI11.
      const bool long_name = token.rfind("--", 0) == 0;
      if (!long_name && token.size() > 2) continue;
      const auto eq = token.find('=');
      const std::string name = token.substr(0, eq);
      const CLI::Option* opt = find_option(current, name);
      if (opt == nullptr) {
        return with_suggestion(command_path(current) + ": unknown option '" + name + "'.",
                               closest_name(name, option_names(current))) +
               "\nRun '" + command_path(current) + " --help' for its options.";
      }
      value_expected = eq == std::string::npos && opt->get_items_expected_max() > 0;
      continue;
    }
    // Commands nest (`ncclfi lab start`): a word naming a subcommand of the current one descends.
    const auto subs = current->get_subcommands([](const CLI::App*) { return true; });
    const auto it =
        std::find_if(subs.begin(), subs.end(), [&](const CLI::App* s) { return s->check_name(token); });
    if (it != subs.end()) {
      current = *it;
      continue;
    }
    // A command that is only a group of commands (ncclfi, `ncclfi lab`) takes no other word.
    if (!subs.empty() && !takes_positionals(*current)) {
      std::vector<std::string> names;
      for (const CLI::App* s : subs) {
        if (!s->get_group().empty()) names.push_back(s->get_name());  // hidden ones have no group
      }
      const std::string path = command_path(current);
      return with_suggestion(path + ": unknown command '" + token + "'.", closest_name(token, names)) +
             "\nRun '" + path + " --help' for the commands.";
    }
  }
  return std::nullopt;
}

}  // namespace ncclfi::cli
