// "Did you mean ...": before CLI11 parses, the command line is checked for a subcommand or an option
// that does not exist, and the closest existing name is suggested (CLI11 2.1 has no suggestions of
// its own and would only say "A subcommand is required" or "The following arguments were not
// expected").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "text_format.h"

namespace ncclfi::cli {

using harness::edit_distance;  // text_format.h
// The candidate closest to `typed` when it is close enough to be a typo (or `typed` is a prefix of
// exactly one candidate), else nullopt.
std::optional<std::string> closest_name(const std::string& typed, const std::vector<std::string>& candidates);

// An error message for the first unknown subcommand or option of `args` (argv without the program
// name), with a suggestion when one is close; nullopt when every name is known.
std::optional<std::string> unknown_name_error(const CLI::App& app, const std::vector<std::string>& args);

}  // namespace ncclfi::cli
