// onyx perf: session-creation time, latency statistics, throughput and peak memory of a model,
// with onnxruntime_perf_test's flags (perf_flags.h) beside Onyx's long ones.
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <numeric>
#include <random>
#include <thread>

#include "base/check.h"
#include "commands.h"
#include "feeds.h"
#include "perf_flags.h"
#include "platform/thread_pool.h"
#include "platform/timer.h"
#include "runtime/session_impl.h"
#include "tensor/npy.h"
#include "thread_flags.h"

namespace onyx::cli {
namespace {

struct PerfArgs {
  std::string model;
  FeedSpec feeds;
  ThreadFlags thread_flags;
  PerfFlags flags;
  int warmup = 2;
  bool json = false;
  std::string save_inputs;
  ProfileOption profile;
};

double PeakRssMb() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is KiB on Linux
}

double CpuSeconds() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

double Percentile(const std::vector<double>& sorted, double p) {
  const double rank = p * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(sorted.size() - 1, lo + 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - static_cast<double>(lo));
}

// Latencies (ms) of the timed runs: `concurrent` threads share -r's count (perf_test's -c), each
// taking an equal share, so every worker runs however the OS schedules them; or all run until
// `seconds` have passed.
std::vector<double> TimedRuns(const Session& session, const NamedValues& feeds, int runs, double seconds,
                              int concurrent) {
  std::vector<double> ms;
  std::mutex mutex;
  std::atomic<bool> stop{false};
  const int64_t start = NowNanos();
  auto worker = [&](int share) {
    for (int done = 0; !stop.load(); ++done) {
      if (runs > 0 && done >= share) return;
      if (runs == 0 && static_cast<double>(NowNanos() - start) / 1e9 >= seconds) return;
      const int64_t r0 = NowNanos();
      session.Run(feeds);
      const double run_ms = static_cast<double>(NowNanos() - r0) / 1e6;
      std::lock_guard<std::mutex> lock(mutex);
      ms.push_back(run_ms);
    }
  };
  auto share_of = [&](int i) { return runs / concurrent + (i < runs % concurrent ? 1 : 0); };
  if (concurrent == 1) {
    worker(runs);
  } else {
    std::vector<std::thread> threads;
    std::exception_ptr failure;
    std::mutex failure_mutex;
    // All workers start together, so they run side by side rather than one after another.
    std::atomic<int> ready{0};
    for (int i = 0; i < concurrent; ++i) {
      threads.emplace_back([&, i] {
        ready.fetch_add(1);
        while (ready.load() < concurrent) std::this_thread::yield();
        try {
          worker(share_of(i));
        } catch (...) {
          std::lock_guard<std::mutex> lock(failure_mutex);
          if (!failure) failure = std::current_exception();
          stop = true;  // the others stop too
        }
      });
    }
    for (auto& t : threads) t.join();
    if (failure) std::rethrow_exception(failure);
  }
  return ms;
}

std::string ShapeText(const Value& value) {
  if (!value.is_tensor()) return "null";
  std::string text = "[";
  const Shape& shape = value.tensor().shape();
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

void Perf(PerfArgs args) {
  ONYX_CHECK(args.warmup >= 0, kInvalidArgument, "--warmup must be >= 0");
  const auto [runs, seconds] = ResolveRunLength(args.flags);
  SessionOptions options;
  ApplyThreadFlags(args.thread_flags, options);
  ApplyPerfTestFlags(args.flags, options);
  ApplyProfileOption(args.profile, options);
  FeedSpec spec = args.feeds;
  spec.random = true;  // inputs not given as files are seeded random values
  spec.seed = args.flags.seed >= 0 ? static_cast<uint64_t>(args.flags.seed) : std::random_device{}();
  const int64_t t0 = NowNanos();
  Session session(args.model, options);
  const double create_ms = static_cast<double>(NowNanos() - t0) / 1e6;
  // Thread counts as resolved (0 in the flags means one per physical core).
  const int intra_threads = session.impl().thread_pool()->num_threads();
  const ThreadPool* inter_pool = session.impl().inter_op_thread_pool();
  const int inter_threads = inter_pool != nullptr ? inter_pool->num_threads() : 0;
  const std::string test_data = AddTestDataInputs(args.flags, args.model, session, spec);
  const NamedValues feeds = BuildFeeds(session, spec);
  if (!args.save_inputs.empty()) {
    std::filesystem::create_directories(args.save_inputs);
    for (const auto& [name, value] : feeds)
      if (value.is_tensor()) WriteNpy(args.save_inputs + "/" + name + ".npy", value.tensor());
  }
  // perf_test's "first inference": the first run, a warm-up one where there is any.
  double first_ms = -1.0;
  for (int i = 0; i < args.warmup; ++i) {
    const int64_t r0 = NowNanos();
    session.Run(feeds);
    if (i == 0) first_ms = static_cast<double>(NowNanos() - r0) / 1e6;
  }
  const double cpu0 = CpuSeconds();
  const int64_t start = NowNanos();
  std::vector<double> ms = TimedRuns(session, feeds, runs, seconds, args.flags.concurrent);
  const double total_s = static_cast<double>(NowNanos() - start) / 1e9;
  ONYX_CHECK(!ms.empty(), kInvalidArgument, "no run finished (-t/--duration too short?)");
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const double cpu_pct = 100.0 * (CpuSeconds() - cpu0) / (total_s * cores);
  if (first_ms < 0) first_ms = ms.front();
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  const double sum_ms = std::accumulate(ms.begin(), ms.end(), 0.0);
  const double mean = sum_ms / static_cast<double>(ms.size());
  const double throughput = static_cast<double>(ms.size()) / total_s;
  const ArenaAllocator* arena = session.impl().arena();
  // Every run is in the profile, the warm-up ones too (ONNX Runtime's perf tool does the same).
  const std::string profile_path = session.EndProfiling();
  if (args.json) {
    std::string inputs;
    for (const auto& [name, value] : feeds) inputs += (inputs.empty() ? "" : ", ") + ("\"" + name + "\": " + ShapeText(value));
    std::string arena_json = "null";
    if (arena != nullptr) {
      const auto stats = arena->stats();
      arena_json = "{\"reserved_bytes\": " + std::to_string(stats.reserved) +
                   ", \"pattern_blocks\": " + std::to_string(stats.pattern_blocks) +
                   ", \"pattern_allocations\": " + std::to_string(stats.pattern_allocations) + "}";
    }
    std::printf(
        "{\"model\": \"%s\", \"providers\": [\"%s\"], \"threads\": %d, \"inter_threads\": %d, "
        "\"execution_mode\": \"%s\", \"opt_level\": \"%s\", \"session_creation_ms\": %.3f, \"runs\": %zu, "
        "\"concurrent\": %d, \"first_inference_ms\": %.4f, \"total_inference_ms\": %.4f, \"run_time_s\": %.6f, "
        "\"latency_ms\": {\"min\": %.4f, \"median\": %.4f, \"mean\": %.4f, \"p90\": %.4f, \"p95\": %.4f, "
        "\"p99\": %.4f, \"p999\": %.4f, \"max\": %.4f}, \"throughput_per_s\": %.3f, \"avg_cpu_usage_pct\": %.1f, "
        "\"peak_rss_mb\": %.1f, \"arena\": %s, \"inputs\": {%s}, \"input_source\": \"%s\"%s}\n",
        args.model.c_str(), session.providers().front().c_str(), intra_threads, inter_threads,
        inter_pool != nullptr ? "parallel" : "sequential", args.flags.opt_level.c_str(), create_ms, ms.size(),
        args.flags.concurrent, first_ms, sum_ms, total_s, sorted.front(), Percentile(sorted, 0.5), mean,
        Percentile(sorted, 0.9), Percentile(sorted, 0.95), Percentile(sorted, 0.99), Percentile(sorted, 0.999),
        sorted.back(), throughput, cpu_pct, PeakRssMb(), arena_json.c_str(), inputs.c_str(),
        test_data.empty() ? (args.feeds.inputs.empty() ? "generated" : "files") : "test_data_set_0",
        profile_path.empty() ? "" : (", \"profile\": \"" + profile_path + "\"").c_str());
    return;
  }
  std::printf("model: %s\n", args.model.c_str());
  std::printf("session creation: %.2f ms\n", create_ms);
  if (inter_pool != nullptr) {
    std::printf("threads: %d intra-op; parallel execution on %d inter-op\n", intra_threads, inter_threads);
  } else {
    std::printf("threads: %d intra-op; sequential execution\n", intra_threads);
  }
  if (!test_data.empty()) std::printf("inputs: %s\n", test_data.c_str());
  std::printf("runs: %zu (after %d warm-up)%s\n", ms.size(), args.warmup,
              args.flags.concurrent > 1 ? (", " + std::to_string(args.flags.concurrent) + " at once").c_str() : "");
  std::printf("latency ms: min %.3f  median %.3f  mean %.3f  p90 %.3f  p99 %.3f  max %.3f\n", sorted.front(),
              Percentile(sorted, 0.5), mean, Percentile(sorted, 0.9), Percentile(sorted, 0.99), sorted.back());
  std::printf("throughput: %.2f runs/s\n", throughput);
  std::printf("peak resident memory: %.1f MB\n", PeakRssMb());
  // The figures onnxruntime_perf_test prints, in its words and units.
  std::printf("Session creation time cost: %.6f s\n", create_ms / 1e3);
  std::printf("First inference time cost: %.0f ms\n", first_ms);
  std::printf("Total inference time cost: %.6f s\n", sum_ms / 1e3);
  std::printf("Total inference requests: %zu\n", ms.size());
  std::printf("Average inference time cost: %.6f ms\n", mean);
  std::printf("Total inference run time: %.6f s\n", total_s);
  std::printf("Number of inferences per second: %.6f\n", throughput);
  std::printf("Avg CPU usage: %.0f %%\n", cpu_pct);
  std::printf("Peak working set size: %.0f bytes\n", PeakRssMb() * 1024 * 1024);
  if (args.flags.statistics) {
    std::printf("Min Latency: %.6f s\n", sorted.front() / 1e3);
    std::printf("Max Latency: %.6f s\n", sorted.back() / 1e3);
    const std::pair<const char*, double> ranks[] = {{"P50", 0.5}, {"P90", 0.9}, {"P95", 0.95}, {"P99", 0.99},
                                                    {"P999", 0.999}};
    for (const auto& [label, p] : ranks) std::printf("%s Latency: %.6f s\n", label, Percentile(sorted, p) / 1e3);
  }
  if (!profile_path.empty()) std::printf("profile: %s\n", profile_path.c_str());
}

}  // namespace

void AddPerfCommand(CLI::App& app) {
  auto args = std::make_shared<PerfArgs>();
  CLI::App* cmd = app.add_subcommand("perf", "Measure a model's latency, throughput and memory "
                                             "(onnxruntime_perf_test's flags work too)");
  cmd->add_option("model", args->model, "The .onnx model")->required();
  AddThreadFlags(cmd, args->thread_flags);
  AddPerfTestFlags(cmd, args->flags, args->thread_flags);
  cmd->add_option("--warmup", args->warmup, "Untimed runs first (default 2)");
  cmd->add_option("--dim", args->feeds.dims, "NAME=N: size of a symbolic dimension (default 1)");
  cmd->add_option("--input", args->feeds.inputs, "NAME=FILE (.npy or .pb); others are seeded random");
  cmd->add_option("--save-inputs", args->save_inputs, "Write the feeds used as DIR/<input>.npy");
  cmd->add_flag("--json", args->json, "Print one JSON object");
  AddProfileOption(cmd, args->profile);
  cmd->callback([args] { Perf(*args); });
}

}  // namespace onyx::cli
