// onyx optimize: write the optimized graph as an ONNX model and report what each pass changed.
#include <cstdio>

#include "base/check.h"
#include "commands.h"
#include "onnx/model_loader.h"
#include "onnx/model_writer.h"
#include "optimizer/pass_manager.h"

namespace onyx::cli {
namespace {

struct OptimizeArgs {
  std::string model;
  std::string output;
  std::string level = "all";
  std::vector<std::string> disabled;
  std::vector<std::string> only;
  std::string external_data;
  int64_t external_min_bytes = 1024;
  bool report = false;
  bool require_kernels = false;
};

int64_t InitializerBytes(const ir::Graph& g) {
  int64_t total = 0;
  for (const auto& [name, t] : g.initializers) total += t.byte_size();
  return total;
}

void Optimize(const OptimizeArgs& args) {
  auto model = LoadModelFromFile(args.model);
  OptimizerOptions options;
  options.level = ParseOptLevel(args.level);
  options.disabled_passes = args.disabled;
  options.only_passes = args.only;
  options.require_kernels = args.require_kernels;
  const OptimizationReport report = OptimizeModel(*model, options);
  SaveOptions save;
  // Protobuf cannot hold 2 GB: large models get external data even when not asked.
  if (!args.external_data.empty() || InitializerBytes(*model->graph) > (int64_t{1} << 31) - (int64_t{1} << 26)) {
    save.external_file_name = args.external_data;
    save.external_threshold_bytes = args.external_min_bytes;
  }
  SaveModel(*model, args.output, save);
  if (args.report) std::printf("%s", report.ToString().c_str());
  std::printf("wrote %s\n", args.output.c_str());
}

}  // namespace

void AddOptimizeCommand(CLI::App& app) {
  auto args = std::make_shared<OptimizeArgs>();
  CLI::App* cmd = app.add_subcommand("optimize", "Optimize a model's graph and save it as ONNX");
  cmd->add_option("model", args->model, "The .onnx model")->required();
  cmd->add_option("-o,--output", args->output, "Where to write the optimized model")->required();
  cmd->add_option("--level", args->level, "disabled, basic, extended or all (default all)");
  cmd->add_option("--disable", args->disabled, "A pass to skip, by name; repeatable");
  cmd->add_option("--only", args->only, "Run only this pass; repeatable");
  cmd->add_option("--external-data", args->external_data, "Write weights to this file beside the output");
  cmd->add_option("--external-min-bytes", args->external_min_bytes, "Smallest tensor put in external data");
  cmd->add_flag("--report", args->report, "Print what each pass changed and the node counts by op type");
  cmd->add_flag("--require-kernels", args->require_kernels,
                "Fuse only into ops Onyx has kernels for, as a session does (default: every fusion)");
  cmd->callback([args] { Optimize(*args); });
}

}  // namespace onyx::cli
