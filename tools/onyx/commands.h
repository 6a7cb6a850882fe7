// Subcommands of the `onyx` tool; each file adds one to the app.
#pragma once

#include <CLI/CLI.hpp>

namespace onyx::cli {

void AddRunCommand(CLI::App& app);
void AddInfoCommand(CLI::App& app);
void AddOptimizeCommand(CLI::App& app);
void AddPerfCommand(CLI::App& app);

}  // namespace onyx::cli
