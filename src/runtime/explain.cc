#include "onyx/explain.h"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "linalg/conv.h"
#include "linalg/gemm.h"
#include "onnx/model_loader.h"
#include "optimizer/pass.h"
#include "runtime/fusion_checks.h"
#include "runtime/partitioner.h"
#include "runtime/pass_provenance.h"
#include "runtime/session_impl.h"

namespace onyx {
namespace {

// What is known of the kernel variant without running it.
std::string KernelText(const ir::Node& node) {
  static const std::set<std::string> gemm_ops = {"MatMul", "FusedMatMul", "Gemm", "Attention", "MultiHeadAttention"};
  if (gemm_ops.count(node.op_type)) return "GEMM microkernel " + linalg::SgemmKernelName();
  if (node.op_type == "NchwcConv") return "direct NCHWc convolution, " + linalg::ConvIsa();
  if (node.op_type == "Conv" || node.op_type == "FusedConv") {
    return "convolution on " + linalg::ConvIsa() +
           "; the kernel picks Winograd, direct NCHWc, GEMM or depthwise from the input shape when it runs "
           "and does not report which";
  }
  return "";
}

// The original nodes that computed `node`'s outputs from its inputs.
std::vector<std::string> Replaced(const ir::Node& node, const ir::Graph& original,
                                  const std::unordered_map<std::string, ir::Node*>& producers) {
  std::unordered_set<std::string> stop(node.inputs.begin(), node.inputs.end());
  std::vector<std::string> todo(node.outputs.begin(), node.outputs.end());
  std::unordered_set<const ir::Node*> seen;
  std::vector<std::string> names;
  while (!todo.empty() && seen.size() < 4096) {
    const std::string v = todo.back();
    todo.pop_back();
    if (v.empty() || stop.count(v)) continue;
    auto it = producers.find(v);
    if (it == producers.end() || !seen.insert(it->second).second) continue;
    names.push_back(it->second->name);
    for (const auto& in : it->second->inputs)
      if (!original.IsInitializer(in)) todo.push_back(in);
  }
  std::reverse(names.begin(), names.end());
  return names;
}

}  // namespace

Explanation Explain(const Session& session) {
  const SessionImpl& impl = session.impl();
  Explanation e;
  e.model = impl.model().path;
  e.level = OptLevelName(static_cast<OptLevel>(static_cast<int>(impl.options().graph_optimization_level)));
  for (const auto& p : impl.providers()) e.providers.push_back(p->name());
  const ir::Graph& graph = *impl.model().graph;
  std::shared_ptr<ir::Model> original_model;
  if (!e.model.empty()) {
    original_model = LoadModelFromFile(e.model);
  } else {
    e.notes.push_back("the session was made from bytes: the original graph is not kept, so what each node "
                      "replaced and what was removed are not listed");
  }
  std::unordered_map<std::string, ir::Node*> original_producers;
  std::unordered_map<std::string, const ir::Node*> original_by_name;
  if (original_model) {
    original_producers = original_model->graph->Producers();
    for (const auto& n : original_model->graph->nodes) original_by_name[n->name] = n.get();
  }
  std::unordered_set<std::string> accounted;
  const OptimizationReport& report = impl.optimization_report();
  for (const auto& node : graph.nodes) {
    NodeExplanation n;
    n.name = node->name;
    n.op = node->op_type;
    n.domain = node->domain;
    if (const Placement* p = impl.plan().PlacementOf(node.get())) {
      if (p->provider != nullptr) n.provider = p->provider->name();
      n.declined = p->declined;
    }
    auto same = original_by_name.find(node->name);
    const bool unchanged = same != original_by_name.end() && same->second->op_type == node->op_type &&
                           same->second->domain == node->domain;
    if (unchanged) {
      n.created_by = "the model";
      if (same->second->inputs != node->inputs) {
        // Kept its name but not its operands (a fold such as Conv+BatchNormalization rewrote it).
        std::string inputs;
        for (const auto& in : node->inputs) inputs += (inputs.empty() ? "" : ", ") + in;
        n.created_by = "the model, rewritten by a pass (its inputs are now " + inputs + ")";
      }
      accounted.insert(node->name);
    } else {
      if (original_model) n.replaces = Replaced(*node, *original_model->graph, original_producers);
      for (const auto& r : n.replaces) accounted.insert(r);
      n.created_by = CreatedBy(*node, &report);
    }
    n.kernel = KernelText(*node);
    e.nodes.push_back(std::move(n));
  }
  if (original_model) {
    for (const auto& n : original_model->graph->nodes) {
      if (accounted.count(n->name)) continue;
      const std::string passes = PassesRemoving(n->op_type, report);
      e.removed.emplace_back(n->name,
                             n->op_type + (passes.empty() ? " (folded or eliminated)" : " (by " + passes + ")"));
    }
  }
  e.fusion_misses =
      FindFusionMisses(graph, static_cast<OptLevel>(static_cast<int>(impl.options().graph_optimization_level)));
  return e;
}

}  // namespace onyx
