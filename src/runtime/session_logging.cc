#include "runtime/session_logging.h"

#include <vector>

#include "optimizer/pass.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

int TotalNodes(const std::map<std::string, int>& counts) {
  int total = 0;
  for (const auto& [op, n] : counts) total += n;
  return total;
}

std::string KernelOf(const ir::Node& node, const ExecutionProvider& provider) {
  const KernelDef* def = KernelRegistry::Global().Find(provider.name(), node.domain, node.op_type, node.opset);
  if (def == nullptr) return "a kernel of its own";  // e.g. compiled by the provider
  const std::string op = def->domain.empty() ? def->op_type : StrCat(def->domain, ".", def->op_type);
  return def->until >= kOpsetMax ? StrCat(op, " opset ", def->since, "+") : StrCat(op, " opsets ", def->since, "-", def->until);
}

}  // namespace

void LogSessionCreated(const Logger& logger, const std::string& model_label, const SessionOptions& options,
                       const GraphPlan& plan, const OptimizationReport& report) {
  if (options.enable_mem_pattern && !options.enable_cpu_mem_arena)
    logger.Warning(model_label, ": enable_mem_pattern has no effect without the CPU arena (enable_cpu_mem_arena is "
                   "false): Runs allocate every value from the system");
  for (const auto& node : plan.graph().nodes) {
    const Placement* placement = plan.PlacementOf(node.get());
    if (placement == nullptr || placement->provider == nullptr) continue;
    if (!placement->declined.empty()) {
      logger.Warning(model_label, ": ", node->Describe(), " falls back: ", placement->Explain());
    } else {
      logger.Verbose(0, model_label, ": ", node->Describe(), " runs on ", placement->provider->name(), ", kernel ",
                     KernelOf(*node, *placement->provider));
    }
  }
  if (!logger.Enabled(LogSeverity::kInfo)) return;
  std::vector<std::string> passes;
  for (const auto& p : report.passes)
    if (p.rewrites > 0) passes.push_back(StrCat(p.name, " x", p.rewrites));
  std::vector<std::string> fused;
  for (const auto& [op, n] : report.FusedOperatorStatistics()) fused.push_back(StrCat(op, " x", n));
  logger.Info(model_label, ": session created: ", TotalNodes(report.op_counts_after), " nodes (",
              TotalNodes(report.op_counts_before), " before optimization at level ", OptLevelName(report.level),
              "); passes that rewrote: ", passes.empty() ? std::string("none") : StrJoin(passes),
              "; fused: ", fused.empty() ? std::string("none") : StrJoin(fused));
}

}  // namespace onyx
