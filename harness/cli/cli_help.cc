#include "cli_help.h"

#include "cli_model.h"

namespace ncclfi::cli {
namespace {

class HelpFormatter : public CLI::Formatter {
 public:
  // "--color WHEN", "-q, --quiet"; a positional by its name ("paths ...").
  std::string make_option_name(const CLI::Option* opt, bool is_positional) const override {
    const OptionModel m = option_model(opt);
    if (is_positional) return m.names.front() + (m.repeatable ? " ..." : "");
    return option_label(m);
  }
  // Everything is in the name and the description: nothing of CLI11's type spelling.
  std::string make_option_opts(const CLI::Option*) const override { return ""; }
  std::string make_option_desc(const CLI::Option* opt) const override {
    return option_description(option_model(opt));
  }
};

}  // namespace

std::shared_ptr<CLI::Formatter> help_formatter() {
  return std::make_shared<HelpFormatter>();
}

}  // namespace ncclfi::cli
