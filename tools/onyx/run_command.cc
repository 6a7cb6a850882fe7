// onyx run: run a model on given or random inputs, print and save its outputs; or check an
// ONNX test folder.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <vector>

#include "base/check.h"
#include "base/json_string.h"
#include "commands.h"
#include "optimizer/pass.h"
#include "feeds.h"
#include "platform/timer.h"
#include "tensor/npy.h"
#include "thread_flags.h"
#include "testing/test_folder.h"

namespace onyx::cli {
namespace {

struct RunArgs {
  std::string model;
  FeedSpec feeds;
  std::string test_dir;
  std::string output_dir;
  ThreadFlags thread_flags;
  int runs = 1;
  std::string opt_level = "all";
  ProfileOption profile;
  std::string creation_cache;  // folder of the session's creation cache; empty: none
};

GraphOptimizationLevel LevelFromText(const std::string& text) {
  return static_cast<GraphOptimizationLevel>(static_cast<int>(ParseOptLevel(text)));
}

double Checksum(const Tensor& t) {
  if (t.dtype() == DataType::kString) {
    double s = 0;
    for (int64_t i = 0; i < t.size(); ++i) s += static_cast<double>(t.data<std::string>()[i].size());
    return s;
  }
  double s = 0;
  for (int64_t i = 0; i < t.size(); ++i) s += testing::ElementAsDouble(t, i);
  return s;
}

std::string FirstValues(const Tensor& t, int64_t count) {
  std::string s;
  for (int64_t i = 0; i < std::min(count, t.size()); ++i) {
    if (i) s += " ";
    if (t.dtype() == DataType::kString) {
      s += "\"" + t.data<std::string>()[i] + "\"";
    } else {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%.6g", testing::ElementAsDouble(t, i));
      s += buf;
    }
  }
  if (t.size() > count) s += " ...";
  return s;
}

std::string SafeFileName(std::string name) {
  for (char& c : name)
    if (c == '/' || c == ':') c = '_';
  return name;
}

// JSON for values that are not tensors (sequences, maps), so tests can read them back:
// tensor {"dtype", "shape", "data"}, sequence [..], map {"keys": tensor, "values": tensor}.
void AppendJson(std::string& out, const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kNone: out += "null"; return;
    case Value::Kind::kSequence: {
      out += '[';
      bool first = true;
      for (const Value& e : v.sequence()) {
        if (!first) out += ',';
        first = false;
        AppendJson(out, e);
      }
      out += ']';
      return;
    }
    case Value::Kind::kMap:
      out += "{\"keys\":";
      AppendJson(out, Value(v.map_keys()));
      out += ",\"values\":";
      AppendJson(out, Value(v.map_values()));
      out += '}';
      return;
    case Value::Kind::kTensor: {
      const Tensor& t = v.tensor();
      out += "{\"dtype\":";
      AppendJsonString(out, DataTypeName(t.dtype()));
      out += ",\"shape\":[";
      for (size_t i = 0; i < t.rank(); ++i) out += (i ? "," : "") + std::to_string(t.dim(i));
      out += "],\"data\":[";
      for (int64_t i = 0; i < t.size(); ++i) {
        if (i) out += ',';
        if (t.dtype() == DataType::kString) {
          AppendJsonString(out, t.data<std::string>()[i]);
        } else {
          const double d = testing::ElementAsDouble(t, i);
          if (std::isnan(d)) {
            out += "\"nan\"";
          } else if (std::isinf(d)) {
            out += d > 0 ? "\"inf\"" : "\"-inf\"";
          } else {
            char buf[40];
            std::snprintf(buf, sizeof(buf), "%.17g", d);
            out += buf;
          }
        }
      }
      out += "]}";
      return;
    }
  }
}

int RunTestDir(const RunArgs& args) {
  SessionOptions options;
  ApplyThreadFlags(args.thread_flags, options);
  options.graph_optimization_level = LevelFromText(args.opt_level);
  const auto result = testing::RunTestFolder(args.test_dir, options);
  if (!result.error.empty()) {
    std::printf("%s: ERROR %s\n", args.test_dir.c_str(), result.error.c_str());
    return 1;
  }
  for (const auto& ds : result.data_sets)
    std::printf("%s: %s%s%s\n", ds.name.c_str(), ds.passed ? "PASS" : "FAIL", ds.passed ? "" : " ", ds.message.c_str());
  std::printf("%s\n", result.passed() ? "all data sets passed" : "some data sets failed");
  return result.passed() ? 0 : 1;
}

void Run(const RunArgs& args) {
  if (!args.test_dir.empty()) {
    ONYX_CHECK(args.profile.option->count() == 0, kInvalidArgument, "--profile profiles a MODEL's runs, not --test-dir");
    const int code = RunTestDir(args);
    std::fflush(stdout);
    if (code != 0) throw Error(ErrorCode::kRuntime, "test folder " + args.test_dir + " failed");
    return;
  }
  ONYX_CHECK(!args.model.empty(), kInvalidArgument, "onyx run needs a MODEL (or --test-dir)");
  ONYX_CHECK(args.runs >= 1, kInvalidArgument, "--runs must be at least 1");
  SessionOptions options;
  ApplyThreadFlags(args.thread_flags, options);
  options.graph_optimization_level = LevelFromText(args.opt_level);
  ApplyProfileOption(args.profile, options);
  if (!args.creation_cache.empty()) options.config_entries["session.onyx_creation_cache_dir"] = args.creation_cache;
  const int64_t create_start = NowNanos();
  Session session(args.model, options);
  if (!args.creation_cache.empty())
    std::printf("session created in %.1f ms, creation cache: %s\n",
                static_cast<double>(NowNanos() - create_start) / 1e6, session.creation_cache_status().c_str());
  const NamedValues feeds = BuildFeeds(session, args.feeds);
  std::vector<Value> outputs;
  std::vector<double> times_ms;
  for (int r = 0; r < args.runs; ++r) {
    const int64_t start = NowNanos();
    outputs = session.Run(feeds);
    times_ms.push_back(static_cast<double>(NowNanos() - start) / 1e6);
  }
  if (!args.output_dir.empty()) std::filesystem::create_directories(args.output_dir);
  const auto& infos = session.outputs();
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Value& v = outputs[i];
    if (!v.is_tensor()) {
      std::printf("%s: %s\n", infos[i].name.c_str(), v.Describe().c_str());
      if (!args.output_dir.empty()) {
        std::string json;
        AppendJson(json, v);
        const auto path = std::filesystem::path(args.output_dir) / (std::to_string(i) + "_" + SafeFileName(infos[i].name) + ".json");
        std::ofstream(path) << json << "\n";
      }
      continue;
    }
    const Tensor& t = v.tensor();
    std::printf("%s: %s %s sum=%.9g values=[%s]\n", infos[i].name.c_str(), std::string(DataTypeName(t.dtype())).c_str(),
                ShapeToString(t.shape()).c_str(), Checksum(t), FirstValues(t, 6).c_str());
    if (!args.output_dir.empty()) {
      const auto path = std::filesystem::path(args.output_dir) / (std::to_string(i) + "_" + SafeFileName(infos[i].name) + ".npy");
      WriteNpy(path.string(), t);
    }
  }
  std::sort(times_ms.begin(), times_ms.end());
  std::printf("time per run: %.3f ms (median of %d run%s)\n", times_ms[times_ms.size() / 2], args.runs,
              args.runs == 1 ? "" : "s");
  if (options.enable_profiling) std::printf("profile: %s\n", session.EndProfiling().c_str());
}

}  // namespace

void AddRunCommand(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand("run", "Run a model and print (and save) its outputs");
  cmd->add_option("model", args->model, "The .onnx model");
  cmd->add_option("--input", args->feeds.inputs, "NAME=FILE (.npy or TensorProto .pb); repeatable");
  cmd->add_option("--test-dir", args->test_dir, "An ONNX test folder (model.onnx + test_data_set_N)");
  cmd->add_option("--output-dir", args->output_dir, "Write each output as DIR/<index>_<name>.npy (.json for sequences and maps)");
  cmd->add_flag("--random", args->feeds.random, "Seeded random values for inputs not given");
  cmd->add_option("--seed", args->feeds.seed, "Seed for --random (default 0)");
  cmd->add_option("--dim", args->feeds.dims, "NAME=N: size of a symbolic dimension for --random (default 1)");
  AddThreadFlags(cmd, args->thread_flags);
  cmd->add_option("--runs", args->runs, "Run this many times and report the median time");
  cmd->add_option("--opt-level", args->opt_level, "Graph optimization: disabled, basic, extended, all (default)");
  AddProfileOption(cmd, args->profile);
  cmd->add_option("--creation-cache", args->creation_cache,
                  "Keep the optimized graph and packed weights in DIR, keyed by model, build, CPU and options, "
                  "so the next creation of the same model maps them instead (config entry "
                  "session.onyx_creation_cache_dir)");
  cmd->callback([args] { Run(*args); });
}

}  // namespace onyx::cli
