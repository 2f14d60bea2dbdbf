// The hidden `ncclfi help-man` and `ncclfi completion bash`: the build runs them to make ncclfi.1 and
// the bash completion from the CLI definition (cli_docs.cc).
#include <iostream>

#include "build_info.h"
#include "cli_docs.h"
#include "commands.h"
#include "suite_runner.h"

namespace ncclfi::cli {

void add_generator_commands(CLI::App& app, int& status) {
  auto* man = app.add_subcommand("help-man", "Print the man page ncclfi.1 (troff).")->group("");
  man->callback([&app, &status] {
    std::cout << render_man_page(app, kVersion);
    status = kAllPassed;
  });
  auto shell = std::make_shared<std::string>("bash");
  auto* completion = app.add_subcommand("completion", "Print a shell completion script.")->group("");
  completion->add_option("shell", *shell, "the shell")->check(CLI::IsMember({"bash"}))->capture_default_str();
  completion->callback([&app, &status] {
    std::cout << render_bash_completion(app);
    status = kAllPassed;
  });
}

}  // namespace ncclfi::cli
