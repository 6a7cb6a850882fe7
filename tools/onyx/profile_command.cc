// onyx profile: where a model's time goes. Runs MODEL with profiling (or reads a trace, Onyx's
// or ONNX Runtime's, with --from) and prints time per op type, per node and per provider; -o
// writes a self-contained HTML report (profile_html.h).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include "base/check.h"
#include "commands.h"
#include "feeds.h"
#include "machine_peak.h"
#include "optimizer/pass.h"
#include "profile_html.h"
#include "profile_summary.h"
#include "runtime/session_impl.h"
#include "thread_flags.h"
#include "trace_reader.h"

namespace onyx::cli {
namespace {

struct ProfileArgs {
  std::string model;
  std::string from;
  std::string html;
  std::string trace_prefix = "onyx_profile";
  int top = 15;
  int runs = 3;
  int warmup = 1;
  bool json = false;
  std::string opt_level = "all";
  FeedSpec feeds;
  ThreadFlags thread_flags;
};

SessionOptions OptionsFor(const ProfileArgs& args) {
  SessionOptions options;
  ApplyThreadFlags(args.thread_flags, options);
  options.graph_optimization_level =
      static_cast<GraphOptimizationLevel>(static_cast<int>(ParseOptLevel(args.opt_level)));
  return options;
}

void Profile(const ProfileArgs& args) {
  ONYX_CHECK(!args.model.empty() || !args.from.empty(), kInvalidArgument, "profile needs a MODEL or --from TRACE");
  ONYX_CHECK(args.runs >= 1, kInvalidArgument, "--runs must be >= 1, got ", args.runs);
  ONYX_CHECK(args.warmup >= 0, kInvalidArgument, "--warmup must be >= 0, got ", args.warmup);
  ONYX_CHECK(args.top >= 0, kInvalidArgument, "--top must be >= 0, got ", args.top);
  std::unique_ptr<Session> session;  // the optimized graph for the report
  std::string trace = args.from;
  int skip_runs = 0;
  int threads = 0;
  if (!args.model.empty()) {
    SessionOptions options = OptionsFor(args);
    if (args.from.empty()) {
      options.enable_profiling = true;
      options.profile_file_prefix = args.trace_prefix;
    }
    session = std::make_unique<Session>(args.model, options);
    threads = session->impl().thread_pool()->num_threads();
    if (args.from.empty()) {
      FeedSpec spec = args.feeds;
      spec.random = true;
      const NamedValues feeds = BuildFeeds(*session, spec);
      for (int i = 0; i < args.warmup + args.runs; ++i) session->Run(feeds);
      trace = session->EndProfiling();
      skip_runs = args.warmup;  // warm-up runs are in the trace, not in the summary
      std::fprintf(stderr, "trace: %s\n", trace.c_str());
    }
  }
  const std::vector<TraceEvent> events = ReadTrace(trace);
  const ProfileSummary summary = Summarize(events, skip_runs);
  ONYX_CHECK(!summary.kernels.empty(), kInvalidArgument, "profile '", trace, "' has no kernel events (",
             "Node events named <node>_kernel_time)");
  const MachinePeak peak = MeasureMachinePeak(threads > 0 ? threads : std::max(1, summary.threads));
  if (args.json) {
    std::printf("%s\n", SummaryJson(summary, peak).c_str());
  } else {
    std::printf("profile: %s\n", trace.c_str());
    std::printf("%s", SummaryText(summary, args.top, peak).c_str());
  }
  if (!args.html.empty()) {
    ReportSources sources;
    sources.trace_path = trace;
    sources.model_path = args.model;
    if (session) {
      sources.graph = session->impl().model().graph.get();
      sources.optimization = &session->impl().optimization_report();
    }
    std::ofstream out(args.html, std::ios::binary);
    ONYX_CHECK(out.good(), kInvalidArgument, "-o: cannot write '", args.html, "'");
    out << ProfileHtml(summary, peak, sources);
    ONYX_CHECK(out.good(), kInvalidArgument, "-o: writing '", args.html, "' failed");
    if (!args.json) std::printf("report: %s\n", args.html.c_str());
  }
}

}  // namespace

void AddProfileCommand(CLI::App& app) {
  auto args = std::make_shared<ProfileArgs>();
  CLI::App* cmd = app.add_subcommand(
      "profile", "Where a model's time goes: per op type, per node, per provider; -o writes an HTML report");
  cmd->add_option("model", args->model, "The .onnx model to run (with --from: only its graph, for the report)");
  cmd->add_option("--from", args->from, "Summarize this trace (Onyx's or ONNX Runtime's profile JSON) instead");
  cmd->add_option("-o,--output", args->html, "Write a self-contained HTML report here");
  cmd->add_option("--top", args->top, "Nodes listed (default 15)");
  cmd->add_option("--runs", args->runs, "Profiled runs (default 3)");
  cmd->add_option("--warmup", args->warmup, "Runs before them, left out of the summary (default 1)");
  cmd->add_option("--trace", args->trace_prefix, "The trace goes to PREFIX_<time>.json (default onyx_profile)");
  cmd->add_option("--opt-level", args->opt_level, "Graph optimization: disabled, basic, extended, all (default)");
  cmd->add_option("--dim", args->feeds.dims, "NAME=N: size of a symbolic dimension (default 1)");
  cmd->add_option("--input", args->feeds.inputs, "NAME=FILE (.npy or .pb); others are seeded random");
  cmd->add_flag("--json", args->json, "Print the summary as one JSON object");
  AddThreadFlags(cmd, args->thread_flags);
  cmd->callback([args] { Profile(*args); });
}

}  // namespace onyx::cli
