// onyx explain: why each node of the optimized graph runs where and as it does (explain.h).
#include <cstdio>
#include <sstream>

#include "commands.h"
#include "explain.h"

namespace onyx::cli {

void AddExplainCommand(CLI::App& app) {
  struct Args {
    std::string model;
    std::string providers = "CPU";
    std::string level = "all";
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "explain", "Where each node runs and why, which pass made or removed it, and fusions that did not happen");
  cmd->add_option("model", args->model, "The .onnx model")->required();
  cmd->add_option("--providers", args->providers, "Providers by priority, comma-separated (default CPU), e.g. CUDA,CPU");
  cmd->add_option("--level", args->level, "Graph optimization: disabled, basic, extended, all (default)");
  cmd->add_flag("--json", args->json, "Print one JSON object");
  cmd->callback([args] {
    std::vector<std::string> providers;
    std::stringstream list(args->providers);
    std::string name;
    while (std::getline(list, name, ','))
      if (!name.empty()) providers.push_back(name);
    const Explanation e = ExplainModel(args->model, providers, args->level);
    std::printf("%s", args->json ? (ExplanationJson(e) + "\n").c_str() : ExplanationText(e).c_str());
  });
}

}  // namespace onyx::cli
