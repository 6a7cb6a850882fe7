// Subcommands of the `onyx` tool; each file adds one to the app.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "onyx/session.h"

namespace onyx::cli {

void AddRunCommand(CLI::App& app);
void AddInfoCommand(CLI::App& app);
void AddOptimizeCommand(CLI::App& app);
void AddPerfCommand(CLI::App& app);
void AddProfileCommand(CLI::App& app);
void AddExplainCommand(CLI::App& app);

// `--profile [PREFIX]` of run and perf: the session writes ONNX Runtime's profile to
// "<PREFIX>_<timestamp>.json" (PREFIX defaults to SessionOptions' "onnxruntime_profile").
struct ProfileOption {
  CLI::Option* option = nullptr;
  std::string prefix;
};
inline void AddProfileOption(CLI::App* cmd, ProfileOption& profile) {
  profile.option = cmd->add_option("--profile", profile.prefix,
                                   "Write a profile (chrome://tracing, Perfetto) to PREFIX_<time>.json "
                                   "(default PREFIX: onnxruntime_profile) and print its path")
                       ->expected(0, 1);
}
inline void ApplyProfileOption(const ProfileOption& profile, SessionOptions& options) {
  if (profile.option == nullptr || profile.option->count() == 0) return;
  options.enable_profiling = true;
  if (!profile.prefix.empty()) options.profile_file_prefix = profile.prefix;
}

}  // namespace onyx::cli
