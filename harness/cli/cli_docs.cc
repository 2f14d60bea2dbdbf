#include "cli_docs.h"

#include <sstream>

namespace ncclfi::cli {
namespace {

// troff: a leading '.' or '\'' would start a request, and '\' escapes; '-' is a hyphen unless escaped.
std::string roff(const std::string& text) {
  std::string out;
  bool line_start = true;
  for (const char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
    line_start = c == '\n';
  }
  return out;
}

void man_options(std::ostringstream& out, const std::vector<OptionModel>& options) {
  for (const OptionModel& o : options)
    out << ".TP\n.B " << roff(option_label(o)) << "\n" << roff(option_description(o)) << "\n";
}

// "ncclfi lab start LAB": the command's path and its positionals ([optional]).
std::string synopsis(const CommandModel& cmd) {
  std::string text = cmd.path;
  for (const OptionModel& p : cmd.positionals) {
    const std::string label = option_label(p);
    text += " " + (p.required ? label : "[" + label + "]");
  }
  return text;
}

void man_commands(std::ostringstream& out, const CommandModel& parent) {
  for (const CommandModel& cmd : parent.commands) {
    if (cmd.hidden) continue;
    out << ".SS \"" << roff(synopsis(cmd)) << (cmd.commands.empty() ? "" : " COMMAND") << "\"\n"
        << roff(cmd.description) << "\n";
    man_options(out, cmd.positionals);
    man_options(out, cmd.options);
    if (!cmd.footer.empty()) out << ".PP\n.nf\n" << roff(cmd.footer) << "\n.fi\n";
    man_commands(out, cmd);
  }
}

}  // namespace

std::string render_man_page(const CommandModel& root, const std::string& version) {
  std::ostringstream out;
  const std::string& name = root.name;
  out << ".TH " << roff(name) << " 1 \"\" \"" << roff(name + " " + version) << "\" \"User Commands\"\n";
  std::string description = root.description;
  if (description.rfind(name + ": ", 0) == 0) description.erase(0, name.size() + 2);  // NAME has the name
  out << ".SH NAME\n" << roff(name) << " \\- " << roff(description) << "\n";
  out << ".SH SYNOPSIS\n.B " << roff(name) << "\n[\\fIOPTIONS\\fR] \\fICOMMAND\\fR [\\fIARGS\\fR]\n";
  out << ".SH OPTIONS\n";
  man_options(out, root.options);
  out << ".SH COMMANDS\n";
  man_commands(out, root);
  out << ".SH NOTES\n.nf\n" << roff(root.footer) << "\n.fi\n";
  out << ".SH SEE ALSO\nThe documentation installed under share/doc/ncclfi, and docs/*.md in the source "
         "tree.\n";
  return out.str();
}

}  // namespace ncclfi::cli
