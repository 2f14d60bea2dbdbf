#include "cli_model.h"

#include <algorithm>
#include <cctype>
#include <map>

namespace ncclfi::cli {
namespace {

// Beside the CLI11 definition: the options live as long as the app, which lives for the whole process.
std::map<const CLI::Option*, ValueSpec>& specs() {
  static std::map<const CLI::Option*, ValueSpec> all;
  return all;
}

std::string command_path(const CLI::App& app) {
  std::string path;
  for (const CLI::App* a = &app; a != nullptr; a = a->get_parent())
    path = a->get_name() + (path.empty() ? "" : " " + path);
  return path;
}

}  // namespace

CLI::Option* describe_value(CLI::Option* opt, ValueKind kind, const std::string& name) {
  ValueSpec& spec = specs()[opt];
  spec.kind = kind;
  spec.name = name;
  return opt;
}

void describe_values(CLI::App& cmd, std::initializer_list<Described> values) {
  for (const Described& d : values) describe_value(cmd.get_option(d.name), d.kind, d.value_name);
}

void register_choices(CLI::Option* opt, const std::vector<std::string>& names,
                      const std::string& value_name) {
  specs()[opt] = ValueSpec{ValueKind::kChoice, value_name, names};
}

ValueSpec value_spec(const CLI::Option* opt) {
  if (const auto it = specs().find(opt); it != specs().end()) return it->second;
  if (opt->get_items_expected_max() == 0) return ValueSpec{ValueKind::kNone, "", {}};
  return ValueSpec{};
}

std::string choices_text(const ValueSpec& spec) {
  std::string text;
  for (const auto& c : spec.choices) text += (text.empty() ? "" : "|") + c;
  return text;
}

std::string option_label(const OptionModel& option) {
  std::string label;
  if (option.positional) {
    for (const char c : option.names.front())
      label += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return label + (option.repeatable ? "..." : "");
  }
  // Short names first, as in the usage of most commands ("-q, --quiet").
  std::vector<std::string> names = option.names;
  std::stable_sort(names.begin(), names.end(),
                   [](const std::string& a, const std::string& b) { return a.size() < b.size(); });
  for (const auto& n : names) label += (label.empty() ? "" : ", ") + n;
  if (option.value.kind != ValueKind::kNone) label += " " + option.value.name;
  return label + (option.repeatable ? " ..." : "");
}

std::string option_description(const OptionModel& option) {
  std::string head = choices_text(option.value);
  if (!option.default_text.empty() && option.value.kind != ValueKind::kNone)
    head += head.empty() ? "default " + option.default_text : " (default " + option.default_text + ")";
  if (option.required && !option.positional) head += head.empty() ? "required" : ", required";
  return head.empty() ? option.help : head + ": " + option.help;
}

OptionModel option_model(const CLI::Option* opt) {
  OptionModel m;
  m.positional = !opt->nonpositional();
  if (m.positional) {
    m.names.push_back(opt->get_name(true));
  } else {
    for (const auto& l : opt->get_lnames()) m.names.push_back("--" + l);
    for (const auto& s : opt->get_snames()) m.names.push_back("-" + s);
  }
  m.value = value_spec(opt);
  // A vector option takes any number of values; a scalar one given twice keeps the last.
  m.repeatable = opt->get_items_expected_max() > 1;
  m.required = opt->get_required();
  m.default_text = opt->get_default_str();
  m.help = opt->get_description();
  return m;
}

CommandModel command_model(const CLI::App& app) {
  CommandModel m;
  m.name = app.get_name();
  m.path = command_path(app);
  m.description = app.get_description();
  m.footer = app.get_footer();
  // Hidden commands (the generators) have no group.
  m.hidden = app.get_parent() != nullptr && app.get_group().empty();
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_lnames() == std::vector<std::string>{"help"}) continue;  // every command has it
    OptionModel o = option_model(opt);
    (o.positional ? m.positionals : m.options).push_back(std::move(o));
  }
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    m.commands.push_back(command_model(*sub));
  return m;
}

}  // namespace ncclfi::cli
