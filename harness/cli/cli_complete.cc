#include "cli_complete.h"

#include <algorithm>

namespace ncclfi::cli {
namespace {

bool is_option_word(const std::string& w) {
  return w.size() > 1 && w[0] == '-';
}

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

// Options fall through to the parent commands (main() sets fallthrough): `--color` is valid anywhere.
const OptionModel* find_option(const std::vector<const CommandModel*>& chain, const std::string& name) {
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    for (const OptionModel& o : (*it)->options) {
      if (std::find(o.names.begin(), o.names.end(), name) != o.names.end()) return &o;
    }
  }
  return nullptr;
}

const CommandModel* find_command(const CommandModel& cmd, const std::string& name) {
  for (const CommandModel& sub : cmd.commands) {
    if (sub.name == name) return &sub;
  }
  return nullptr;
}

// Where the words before the last one leave us: the command, the option waiting for its value (if
// any), and the positionals given so far.
struct Position {
  std::vector<const CommandModel*> chain;
  const OptionModel* pending = nullptr;
  std::vector<std::string> positionals;
};

Position walk(const CommandModel& root, const std::vector<std::string>& words) {
  Position p;
  p.chain.push_back(&root);
  for (size_t i = 0; i + 1 < words.size(); ++i) {
    const std::string& w = words[i];
    if (p.pending != nullptr) {
      if (w != "=") p.pending = nullptr;  // bash splits --opt=value at '=' into three words
      continue;
    }
    if (is_option_word(w)) {
      const OptionModel* opt = find_option(p.chain, w.substr(0, w.find('=')));
      if (opt != nullptr && opt->value.kind != ValueKind::kNone && w.find('=') == std::string::npos)
        p.pending = opt;
      continue;
    }
    if (const CommandModel* sub = find_command(*p.chain.back(), w)) {
      p.chain.push_back(sub);
      p.positionals.clear();
      continue;
    }
    p.positionals.push_back(w);
  }
  return p;
}

Completion words_of(const std::vector<std::string>& values) {
  Completion c;
  c.kind = Completion::Kind::kWords;
  for (const auto& v : values) c.words.emplace_back(v, "");
  return c;
}

Completion values_of(const ValueSpec& spec, const Position& p, const DynamicValues& values) {
  auto call = [](const auto& f) { return f ? f() : std::vector<std::string>{}; };
  switch (spec.kind) {
    case ValueKind::kChoice:
      return words_of(spec.choices);
    case ValueKind::kScenario:
      return {Completion::Kind::kScenarios, {}};
    case ValueKind::kFile:
      return {Completion::Kind::kFiles, {}};
    case ValueKind::kDirectory:
    case ValueKind::kRunDir:
      return {Completion::Kind::kDirectories, {}};
    case ValueKind::kLab:
      return words_of(call(values.labs));
    case ValueKind::kCause:
      return words_of(call(values.causes));
    case ValueKind::kReportFormat:
      return words_of(call(values.report_formats));
    case ValueKind::kFaultId:
      if (p.positionals.empty() || !values.fault_ids) return {};
      return words_of(values.fault_ids(p.positionals.front()));
    case ValueKind::kNone:
    case ValueKind::kText:
      break;
  }
  return {};
}

// The options valid at this command: its own and those of the commands above it.
Completion options_of(const Position& p) {
  Completion c;
  c.kind = Completion::Kind::kWords;
  for (const CommandModel* cmd : p.chain) {
    for (const OptionModel& o : cmd->options) {
      for (const auto& n : o.names) c.words.emplace_back(n, o.help);
    }
  }
  c.words.emplace_back("--help", "print the help of this command");
  return c;
}

// Keeps the candidates that start with `typed` and puts `prefix` before each ("--color=" when the word
// is "--color=al", "=" when bash made '=' a word of its own).
Completion narrowed(Completion c, const std::string& typed, const std::string& prefix) {
  if (c.kind != Completion::Kind::kWords) return c;
  std::vector<std::pair<std::string, std::string>> kept;
  for (auto& [word, description] : c.words) {
    if (starts_with(word, typed)) kept.emplace_back(prefix + word, description);
  }
  c.words = std::move(kept);
  return c;
}

Completion positional_values(const Position& p, const DynamicValues& values) {
  const CommandModel& cmd = *p.chain.back();
  Completion c;
  for (const CommandModel& sub : cmd.commands) {
    if (!sub.hidden) c.words.emplace_back(sub.name, sub.description);
  }
  if (!c.words.empty()) {
    c.kind = Completion::Kind::kWords;
    return c;
  }
  if (cmd.positionals.empty()) return {};
  size_t index = p.positionals.size();
  if (index >= cmd.positionals.size()) {
    if (!cmd.positionals.back().repeatable) return {};
    index = cmd.positionals.size() - 1;
  }
  return values_of(cmd.positionals[index].value, p, values);
}

}  // namespace

Completion complete(const CommandModel& root, const std::vector<std::string>& words,
                    const DynamicValues& values) {
  const std::vector<std::string> all = words.empty() ? std::vector<std::string>{""} : words;
  const Position p = walk(root, all);
  const std::string& typed = all.back();
  if (p.pending != nullptr) {
    if (typed == "=") return narrowed(values_of(p.pending->value, p, values), "", "=");
    return narrowed(values_of(p.pending->value, p, values), typed, "");
  }
  if (is_option_word(typed)) {
    const auto eq = typed.find('=');
    if (eq == std::string::npos) return narrowed(options_of(p), typed, "");
    const OptionModel* opt = find_option(p.chain, typed.substr(0, eq));
    if (opt == nullptr) return {};
    return narrowed(values_of(opt->value, p, values), typed.substr(eq + 1), typed.substr(0, eq + 1));
  }
  return narrowed(positional_values(p, values), typed, "");
}

std::string completion_text(const Completion& completion) {
  static const char* const kNames[] = {"words", "files", "scenarios", "dirs", "nothing"};
  std::string out = std::string(kNames[static_cast<int>(completion.kind)]) + "\n";
  for (const auto& [word, description] : completion.words) {
    // One line each: a description is cut at its first line and tabs would split it.
    std::string d = description.substr(0, description.find('\n'));
    std::replace(d.begin(), d.end(), '\t', ' ');
    out += word + (d.empty() ? "" : "\t" + d) + "\n";
  }
  return out;
}

}  // namespace ncclfi::cli
