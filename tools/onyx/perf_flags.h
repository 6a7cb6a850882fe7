// onnxruntime_perf_test's flags, as it spells them, for `onyx perf`: -m/-r/-t pick how long to
// run, -e the provider, -o the level, -p the profile, -c concurrent runs, -I/-S the inputs,
// -A/-M the arena and memory pattern, -i provider options, -f/-F free dimensions, -s the
// latency statistics. -x, -y and -P bind onto ThreadFlags (see AddPerfTestFlags).
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "feeds.h"
#include "onyx/session.h"
#include "thread_flags.h"

namespace onyx::cli {

struct PerfFlags {
  std::string mode;              // -m: "times" | "duration" | "" (Onyx's default: 10 runs)
  int runs = 0;                  // -r / --runs
  double duration_s = 0.0;       // -t / --duration
  std::string provider = "cpu";  // -e
  std::string opt_level = "all";  // -o / --opt-level
  std::string profile_prefix;    // -p
  int concurrent = 1;            // -c
  bool generate_inputs = false;  // -I
  int64_t seed = 0;              // -S / --seed; negative: a nondeterministic seed
  bool disable_arena = false;    // -A
  bool disable_mem_pattern = false;  // -M
  std::string provider_options;  // -i "KEY|VALUE KEY|VALUE"
  std::vector<std::string> free_dims_by_name;        // -f "NAME:N [NAME:N ...]"
  std::vector<std::string> free_dims_by_denotation;  // -F
  bool statistics = false;       // -s
};

// Adds the short flags (and the long forms perf already had) to `cmd`.
void AddPerfTestFlags(CLI::App* cmd, PerfFlags& flags, ThreadFlags& threads);

// Runs and seconds after -m/-r/-t: (runs, seconds), exactly one of them non-zero.
// Throws Error(kInvalidArgument) naming the flag on a bad or contradictory value.
std::pair<int, double> ResolveRunLength(const PerfFlags& flags);

// Session options from the flags (providers, level, arena, pattern, free dims, profile).
void ApplyPerfTestFlags(const PerfFlags& flags, SessionOptions& options);

// perf_test reads the inputs from test_data_set_0 beside the model unless -I is given; this
// adds "NAME=FILE" entries for those files (input_<i>.pb feeds the model's i-th input) to
// `spec` and returns the folder, or "" when inputs are generated.
std::string AddTestDataInputs(const PerfFlags& flags, const std::string& model, const Session& session,
                              FeedSpec& spec);

}  // namespace onyx::cli
