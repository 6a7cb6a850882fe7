// onyx info: what a model is made of, and which of its nodes Onyx cannot run (with why).
#include <cstdio>
#include <map>

#include "commands.h"
#include "onnx/model_loader.h"
#include "onyx/session.h"
#include "runtime/partitioner.h"
#include "runtime/session_impl.h"

namespace onyx::cli {
namespace {

void CountOps(const ir::Graph& graph, std::map<std::string, int>& histogram) {
  for (const auto& node : graph.nodes) {
    ++histogram[node->domain.empty() ? node->op_type : node->domain + "." + node->op_type];
    for (const auto& attr : node->attributes) {
      if (attr.g) CountOps(*attr.g, histogram);
      for (const auto& sub : attr.graphs) CountOps(*sub, histogram);
    }
  }
}

void FindUnrunnable(const ir::Graph& graph, const std::vector<const ExecutionProvider*>& providers,
                    std::vector<std::string>& problems) {
  const auto placements = PartitionGraph(graph, providers);
  for (const auto& node : graph.nodes) {
    const Placement& p = placements.at(node.get());
    if (p.provider == nullptr) problems.push_back(node->Describe() + ": " + p.Explain());
    for (const auto& attr : node->attributes) {
      if (attr.g) FindUnrunnable(*attr.g, providers, problems);
      for (const auto& sub : attr.graphs) FindUnrunnable(*sub, providers, problems);
    }
  }
}

void PrintValues(const char* title, const std::vector<ir::ValueInfo>& values, const ir::Graph& graph, bool inputs) {
  std::printf("%s:\n", title);
  for (const auto& v : values) {
    if (inputs && graph.IsInitializer(v.name)) continue;
    std::printf("  %s: %s\n", v.name.c_str(), v.type ? v.type->ToString().c_str() : "unknown");
  }
}

void Info(const std::string& path) {
  auto model = LoadModelFromFile(path);
  const ir::Graph& graph = *model->graph;
  std::printf("model: %s\n", path.c_str());
  std::printf("ir_version: %lld\n", static_cast<long long>(model->ir_version));
  std::printf("producer: %s %s\n", model->producer_name.c_str(), model->producer_version.c_str());
  std::printf("opsets:");
  for (const auto& [domain, version] : model->opset_imports)
    std::printf(" %s=%lld", domain.empty() ? "ai.onnx" : domain.c_str(), static_cast<long long>(version));
  std::printf("\n");
  PrintValues("inputs", graph.inputs, graph, true);
  PrintValues("outputs", graph.outputs, graph, false);
  std::printf("initializers: %zu\n", graph.initializers.size());
  std::map<std::string, int> histogram;
  CountOps(graph, histogram);
  int total = 0;
  for (const auto& [op, n] : histogram) total += n;
  std::printf("nodes: %d\n", total);
  for (const auto& [op, n] : histogram) std::printf("  %-32s %d\n", op.c_str(), n);
  auto cpu = MakeCpuProvider();
  std::vector<std::string> problems;
  FindUnrunnable(graph, {cpu.get()}, problems);
  std::printf("nodes without a kernel: %zu\n", problems.size());
  for (const auto& p : problems) std::printf("  %s\n", p.c_str());
}

// With --providers: where the optimized graph's nodes go, every node left to the CPU with why,
// and the host<->device copies each Run makes. The session is placement-only (no kernels), so
// this works on a machine without the providers' devices too.
void Placements(const std::string& path, const std::string& list) {
  SessionOptions options;
  options.execution_providers.clear();
  std::string item;
  for (char c : list + ",") {
    if (c != ',') {
      item += c;
    } else if (!item.empty()) {
      options.execution_providers.push_back(item);
      item.clear();
    }
  }
  options.placement_only = true;
  Session session(path, options);
  std::printf("providers:");
  for (const auto& p : session.providers()) std::printf(" %s", p.c_str());
  std::printf("\n");
  for (const auto& p : session.impl().providers())
    if (p->name() != "CPU")
      if (const std::string why = ProviderUnavailableReason(p->name()); !why.empty())
        std::printf("note: no %s device here (%s): a session would fail (C++) or fall back to CPU (Python)\n",
                    p->name().c_str(), why.c_str());
  std::map<std::string, int> counts;
  std::vector<std::string> on_cpu;
  for (const auto& node : session.impl().model().graph->nodes) {
    const Placement* p = session.impl().plan().PlacementOf(node.get());
    const std::string where = p != nullptr && p->provider != nullptr ? p->provider->name() : "no provider";
    ++counts[where];
    if (where != "CPU" || p->declined.empty()) continue;
    std::string why;
    for (const auto& [provider, reason] : p->declined) why += (why.empty() ? "" : "; ") + provider + ": " + reason;
    on_cpu.push_back(node->name + " (" + node->op_type + "): " + why);
  }
  for (const auto& [where, n] : counts) std::printf("nodes on %s: %d\n", where.c_str(), n);
  std::printf("nodes left to CPU by the providers before it: %zu\n", on_cpu.size());
  for (const auto& line : on_cpu) std::printf("  %s\n", line.c_str());
  std::printf("host<->device copies per run: %d\n", session.copies_per_run());
}

}  // namespace

void AddInfoCommand(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  auto providers = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("info", "Describe a model and list the nodes Onyx cannot run");
  cmd->add_option("model", *path, "The .onnx model")->required();
  cmd->add_option("--providers", *providers,
                  "Providers by priority, e.g. CUDA,CPU: also list the nodes left to the CPU with why, and the "
                  "host<->device copies per run");
  cmd->callback([path, providers] {
    Info(*path);
    if (!providers->empty()) Placements(*path, *providers);
  });
}

}  // namespace onyx::cli
