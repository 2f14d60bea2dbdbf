// `--help` written from ncclfi's command model (cli_model.h): each option with its placeholder
// (`--color WHEN`), the accepted values of a fixed set listed plainly (`always|auto|never`), the
// default, and nothing of CLI11's type spelling. Set on the root app before any subcommand is added
// (subcommands take their parent's formatter when they are made).
#pragma once

#include <memory>

#include <CLI/CLI.hpp>

namespace ncclfi::cli {

std::shared_ptr<CLI::Formatter> help_formatter();

}  // namespace ncclfi::cli
