// onyx perf: session-creation time, latency statistics, throughput and peak memory of a model.
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "base/check.h"
#include "commands.h"
#include "feeds.h"
#include "optimizer/pass.h"
#include "platform/thread_pool.h"
#include "platform/timer.h"
#include "runtime/session_impl.h"
#include "thread_flags.h"

namespace onyx::cli {
namespace {

struct PerfArgs {
  std::string model;
  FeedSpec feeds;
  ThreadFlags thread_flags;
  int warmup = 2;
  int runs = 0;
  double duration_s = 0.0;
  std::string opt_level = "all";
  bool json = false;
  ProfileOption profile;
};

double PeakRssMb() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is KiB on Linux
}

double Percentile(const std::vector<double>& sorted, double p) {
  const double rank = p * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(sorted.size() - 1, lo + 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - static_cast<double>(lo));
}

void Perf(const PerfArgs& args) {
  ONYX_CHECK(args.warmup >= 0, kInvalidArgument, "--warmup must be >= 0");
  ONYX_CHECK(args.runs >= 0 && args.duration_s >= 0, kInvalidArgument, "--runs and --duration must be >= 0");
  SessionOptions options;
  ApplyThreadFlags(args.thread_flags, options);
  options.graph_optimization_level =
      static_cast<GraphOptimizationLevel>(static_cast<int>(ParseOptLevel(args.opt_level)));
  ApplyProfileOption(args.profile, options);
  FeedSpec spec = args.feeds;
  spec.random = true;  // inputs not given as files are seeded random values
  const int64_t t0 = NowNanos();
  Session session(args.model, options);
  const double create_ms = static_cast<double>(NowNanos() - t0) / 1e6;
  // Thread counts as resolved (0 in the flags means one per physical core).
  const int intra_threads = session.impl().thread_pool()->num_threads();
  const ThreadPool* inter_pool = session.impl().inter_op_thread_pool();
  const int inter_threads = inter_pool != nullptr ? inter_pool->num_threads() : 0;
  const NamedValues feeds = BuildFeeds(session, spec);
  for (int i = 0; i < args.warmup; ++i) session.Run(feeds);
  const int runs = args.runs > 0 ? args.runs : (args.duration_s > 0 ? 0 : 10);
  std::vector<double> ms;
  const int64_t start = NowNanos();
  for (;;) {
    const int64_t r0 = NowNanos();
    session.Run(feeds);
    ms.push_back(static_cast<double>(NowNanos() - r0) / 1e6);
    if (runs > 0 && static_cast<int>(ms.size()) >= runs) break;
    if (runs == 0 && static_cast<double>(NowNanos() - start) / 1e9 >= args.duration_s) break;
  }
  const double total_s = static_cast<double>(NowNanos() - start) / 1e9;
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  const double mean = std::accumulate(ms.begin(), ms.end(), 0.0) / static_cast<double>(ms.size());
  const double throughput = static_cast<double>(ms.size()) / total_s;
  // Every run is in the profile, the warm-up ones too (ONNX Runtime's perf tool does the same).
  const std::string profile_path = session.EndProfiling();
  if (args.json) {
    std::printf(
        "{\"model\": \"%s\", \"threads\": %d, \"inter_threads\": %d, \"execution_mode\": \"%s\", "
        "\"opt_level\": \"%s\", \"session_creation_ms\": %.3f, \"runs\": %zu, "
        "\"latency_ms\": {\"min\": %.4f, \"median\": %.4f, \"mean\": %.4f, \"p90\": %.4f, \"p99\": %.4f, \"max\": "
        "%.4f}, \"throughput_per_s\": %.3f, \"peak_rss_mb\": %.1f%s}\n",
        args.model.c_str(), intra_threads, inter_threads, inter_pool != nullptr ? "parallel" : "sequential",
        args.opt_level.c_str(), create_ms, ms.size(), sorted.front(),
        Percentile(sorted, 0.5), mean, Percentile(sorted, 0.9), Percentile(sorted, 0.99), sorted.back(), throughput,
        PeakRssMb(), profile_path.empty() ? "" : (", \"profile\": \"" + profile_path + "\"").c_str());
    return;
  }
  std::printf("model: %s\n", args.model.c_str());
  std::printf("session creation: %.2f ms\n", create_ms);
  if (inter_pool != nullptr) {
    std::printf("threads: %d intra-op; parallel execution on %d inter-op\n", intra_threads, inter_threads);
  } else {
    std::printf("threads: %d intra-op; sequential execution\n", intra_threads);
  }
  std::printf("runs: %zu (after %d warm-up)\n", ms.size(), args.warmup);
  std::printf("latency ms: min %.3f  median %.3f  mean %.3f  p90 %.3f  p99 %.3f  max %.3f\n", sorted.front(),
              Percentile(sorted, 0.5), mean, Percentile(sorted, 0.9), Percentile(sorted, 0.99), sorted.back());
  std::printf("throughput: %.2f runs/s\n", throughput);
  std::printf("peak resident memory: %.1f MB\n", PeakRssMb());
  if (!profile_path.empty()) std::printf("profile: %s\n", profile_path.c_str());
}

}  // namespace

void AddPerfCommand(CLI::App& app) {
  auto args = std::make_shared<PerfArgs>();
  CLI::App* cmd = app.add_subcommand("perf", "Measure a model's latency, throughput and memory");
  cmd->add_option("model", args->model, "The .onnx model")->required();
  AddThreadFlags(cmd, args->thread_flags);
  cmd->add_option("--warmup", args->warmup, "Untimed runs first (default 2)");
  cmd->add_option("--runs", args->runs, "Timed runs (default 10 unless --duration)");
  cmd->add_option("--duration", args->duration_s, "Run for this many seconds instead of a fixed count");
  cmd->add_option("--dim", args->feeds.dims, "NAME=N: size of a symbolic dimension (default 1)");
  cmd->add_option("--input", args->feeds.inputs, "NAME=FILE (.npy or .pb); others are seeded random");
  cmd->add_option("--seed", args->feeds.seed, "Seed for random inputs");
  cmd->add_option("--opt-level", args->opt_level, "Graph optimization: disabled, basic, extended, all (default)");
  cmd->add_flag("--json", args->json, "Print one JSON object");
  AddProfileOption(cmd, args->profile);
  cmd->callback([args] { Perf(*args); });
}

}  // namespace onyx::cli
