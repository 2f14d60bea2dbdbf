// The man page (ncclfi.1) and the bash completion, generated from the CLI11 definition itself, so they
// can never disagree with `ncclfi --help`. The build runs the hidden `ncclfi help-man` and `ncclfi
// completion bash` commands and installs their output (harness/cli/CMakeLists.txt).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace ncclfi::cli {

// A troff man page (section 1) for `app` and its visible subcommands, with `version` in the header.
std::string render_man_page(const CLI::App& app, const std::string& version);
// A bash completion script for `app`: subcommands, each one's options, the choices of options and
// positionals that have a fixed set (--color, `list`'s first argument), files for the rest.
std::string render_bash_completion(const CLI::App& app);

}  // namespace ncclfi::cli
