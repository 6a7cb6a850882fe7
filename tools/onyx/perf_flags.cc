#include "perf_flags.h"

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "base/check.h"
#include "optimizer/pass.h"

namespace onyx::cli {
namespace {

// "A:1 B:2" (perf_test takes several pairs in one -f, or -f again).
std::vector<std::pair<std::string, int64_t>> ParseDimPairs(const std::vector<std::string>& args, const char* flag) {
  std::vector<std::pair<std::string, int64_t>> pairs;
  for (const std::string& arg : args) {
    std::istringstream words(arg);
    std::string word;
    while (words >> word) {
      const auto colon = word.rfind(':');
      ONYX_CHECK(colon != std::string::npos && colon > 0 && colon + 1 < word.size(), kInvalidArgument, flag,
                 " expects NAME:VALUE, got '", word, "'");
      int64_t value = 0;
      size_t used = 0;
      try {
        value = std::stoll(word.substr(colon + 1), &used);
      } catch (...) {
        used = 0;
      }
      ONYX_CHECK(used == word.size() - colon - 1 && value > 0, kInvalidArgument, flag, " ", word,
                 ": the value must be an integer > 0");
      pairs.emplace_back(word.substr(0, colon), value);
    }
  }
  return pairs;
}

}  // namespace

void AddPerfTestFlags(CLI::App* cmd, PerfFlags& flags, ThreadFlags& threads) {
  cmd->add_option("-m", flags.mode, "perf_test's test mode: 'times' (-r runs, default 1000) or 'duration' "
                                    "(-t seconds, default 600); without -m: --runs/--duration, else 10 runs");
  cmd->add_option("-r,--runs", flags.runs, "Timed runs (default 10 unless --duration)");
  cmd->add_option("-t,--duration", flags.duration_s, "Run for this many seconds instead of a fixed count");
  cmd->add_option("-e", flags.provider, "Execution provider: cpu (default) or cuda (where this build has it)");
  cmd->add_option("-o,--opt-level", flags.opt_level,
                  "Graph optimization: 0/disabled, 1/basic, 2/extended, 3 (layout) or 99/all (default)");
  cmd->add_option("-p", flags.profile_prefix, "Profile to PREFIX_<time>.json (as --profile PREFIX)");
  cmd->add_option("-c", flags.concurrent, "Runs invoked at once from as many threads (default 1)");
  cmd->add_flag("-I", flags.generate_inputs,
                "Generate the inputs (free dims 1 unless -f) instead of reading test_data_set_0 beside the model");
  cmd->add_option("-S,--seed", flags.seed, "Seed for generated inputs (negative: a different one each time)");
  cmd->add_flag("-A", flags.disable_arena, "Disable the memory arena (enable_cpu_mem_arena = false)");
  cmd->add_flag("-M", flags.disable_mem_pattern, "Disable the memory pattern (enable_mem_pattern = false)");
  cmd->add_option("-i", flags.provider_options, "Provider options 'KEY|VALUE KEY|VALUE' (Onyx's CPU takes none)");
  cmd->add_option("-f", flags.free_dims_by_name, "Free dimension override by name, 'NAME:N [NAME:N ...]'");
  cmd->add_option("-F", flags.free_dims_by_denotation, "Free dimension override by denotation (not supported)");
  cmd->add_flag("-s", flags.statistics, "Print latency statistics (min, max, P50 ... P999) as perf_test does");
  cmd->add_option("-x", threads.threads, "Intra-op threads (as --threads)");
  cmd->add_option("-y", threads.inter_threads, "Inter-op threads (as --inter-threads)");
  cmd->add_flag("-P", threads.parallel, "Parallel executor (as --parallel)");
}

std::pair<int, double> ResolveRunLength(const PerfFlags& flags) {
  ONYX_CHECK(flags.runs >= 0, kInvalidArgument, "-r/--runs must be >= 0, got ", flags.runs);
  ONYX_CHECK(flags.duration_s >= 0, kInvalidArgument, "-t/--duration must be >= 0, got ", flags.duration_s);
  if (flags.mode.empty()) {
    if (flags.runs > 0) return {flags.runs, 0.0};
    if (flags.duration_s > 0) return {0, flags.duration_s};
    return {10, 0.0};
  }
  if (flags.mode == "times") {
    ONYX_CHECK(flags.duration_s == 0, kInvalidArgument, "-m times counts runs (-r); -t belongs to -m duration");
    return {flags.runs > 0 ? flags.runs : 1000, 0.0};  // perf_test's defaults
  }
  if (flags.mode == "duration") {
    ONYX_CHECK(flags.runs == 0, kInvalidArgument, "-m duration runs for -t seconds; -r belongs to -m times");
    return {0, flags.duration_s > 0 ? flags.duration_s : 600.0};
  }
  ONYX_THROW(kInvalidArgument, "-m: the test mode is 'times' or 'duration', got '", flags.mode, "'");
}

void ApplyPerfTestFlags(const PerfFlags& flags, SessionOptions& options) {
  ONYX_CHECK(flags.concurrent >= 1, kInvalidArgument, "-c: concurrent runs must be >= 1, got ", flags.concurrent);
  std::string provider = flags.provider;
  std::transform(provider.begin(), provider.end(), provider.begin(), ::tolower);
  const std::vector<std::string> available = AvailableProviders();
  if (provider == "cuda") {
    ONYX_CHECK(std::find(available.begin(), available.end(), "CUDAExecutionProvider") != available.end(),
               kInvalidArgument, "-e cuda: this build of Onyx has no CUDA execution provider (it has ",
               available.front(), ")");
    options.execution_providers = {"CUDA", "CPU"};
  } else {
    ONYX_CHECK(provider == "cpu", kInvalidArgument, "-e ", flags.provider,
               ": Onyx has no such execution provider (cpu, cuda)");
    options.execution_providers = {"CPU"};
  }
  // perf_test's "-i 'key1|value1 key2|value2'": the CUDA provider checks its keys and values when it
  // is made; the CPU provider takes none, and dropping them would measure something else.
  std::istringstream words(flags.provider_options);
  std::string word;
  while (words >> word) {
    ONYX_CHECK(provider == "cuda", kInvalidArgument, "-i ", word, ": the CPU execution provider takes no options");
    const size_t bar = word.find('|');
    ONYX_CHECK(bar != std::string::npos && bar > 0, kInvalidArgument, "-i ", word,
               ": provider options are written key|value");
    options.provider_options["CUDA"][word.substr(0, bar)] = word.substr(bar + 1);
  }
  // perf_test's level 3 is ORT_ENABLE_LAYOUT, which Onyx's "all" includes (NCHWc and friends).
  const std::string level = flags.opt_level == "3" ? "all" : flags.opt_level;
  try {
    options.graph_optimization_level =
        static_cast<GraphOptimizationLevel>(static_cast<int>(ParseOptLevel(level)));
  } catch (const Error&) {
    ONYX_THROW(kInvalidArgument, "-o ", flags.opt_level, ": not a level (0, 1, 2, 3, 99 or disabled, basic, "
               "extended, all)");
  }
  if (flags.disable_arena) {
    options.enable_cpu_mem_arena = false;
    options.enable_mem_pattern = false;  // the pattern's blocks live in the arena
  }
  if (flags.disable_mem_pattern) options.enable_mem_pattern = false;
  for (const auto& [name, value] : ParseDimPairs(flags.free_dims_by_name, "-f"))
    options.free_dimension_overrides_by_name[name] = value;
  const auto by_denotation = ParseDimPairs(flags.free_dims_by_denotation, "-F");
  ONYX_CHECK(by_denotation.empty(), kInvalidArgument, "-F ", by_denotation.empty() ? "" : by_denotation[0].first,
             ": Onyx does not read dimension denotations; override the dimension by name with -f");
  if (!flags.profile_prefix.empty()) {
    options.enable_profiling = true;
    options.profile_file_prefix = flags.profile_prefix;
  }
}

std::string AddTestDataInputs(const PerfFlags& flags, const std::string& model, const Session& session,
                              FeedSpec& spec) {
  namespace fs = std::filesystem;
  if (flags.generate_inputs || !spec.inputs.empty()) return "";
  const fs::path folder = fs::path(model).parent_path() / "test_data_set_0";
  if (!fs::is_directory(folder)) return "";
  const auto& inputs = session.inputs();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const fs::path file = folder / ("input_" + std::to_string(i) + ".pb");
    ONYX_CHECK(fs::exists(file), kInvalidArgument, folder.string(), " lacks ", file.filename().string(), " for input '",
               inputs[i].name, "' (or pass -I to generate the inputs)");
    spec.inputs.push_back(inputs[i].name + "=" + file.string());
  }
  return folder.string();
}

}  // namespace onyx::cli
