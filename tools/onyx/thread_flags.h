// Threading flags shared by `onyx run` and `onyx perf`: intra- and inter-op thread counts,
// parallel execution, and session config entries (spinning, affinities, dynamic blocks).
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "onyx/session.h"

namespace onyx::cli {

struct ThreadFlags {
  int threads = 0;
  int inter_threads = 0;
  bool parallel = false;
  std::vector<std::string> config;  // KEY=VALUE
};

void AddThreadFlags(CLI::App* cmd, ThreadFlags& flags);

// Throws Error(kInvalidArgument) for a --config without '='.
void ApplyThreadFlags(const ThreadFlags& flags, SessionOptions& options);

}  // namespace onyx::cli
