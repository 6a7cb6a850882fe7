#include "onyx/explain.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "onnx/model_loader.h"
#include "ops/shape_inference.h"
#include "optimizer/pass.h"
#include "providers/kernel.h"
#include "runtime/fusion_checks.h"
#include "runtime/kernel_choice.h"
#include "runtime/partitioner.h"
#include "runtime/pass_provenance.h"
#include "runtime/session_impl.h"

namespace onyx {
namespace {

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
    e.notes.push_back("the session was made from bytes: the original graph is not kept, so the original nodes "
                      "each node replaced are not listed");
  }
  std::unordered_map<std::string, ir::Node*> original_producers;
  std::unordered_set<std::string> original_names;
  if (original_model) {
    original_producers = original_model->graph->Producers();
    for (const auto& n : original_model->graph->nodes) original_names.insert(n->name);
  }
  const OptimizationReport& report = impl.optimization_report();
  const TypeMap types = InferGraphTypes(graph);
  GraphFacts facts;  // the graph's producer / consumer maps, built once for every node's kernel text
  std::unordered_set<std::string> present;
  std::map<std::string, std::vector<std::string>> replaced_by;  // original node -> optimized nodes
  for (const auto& node : graph.nodes) {
    present.insert(node->name);
    NodeExplanation n;
    n.name = node->name;
    n.op = node->op_type;
    n.domain = node->domain;
    if (const Placement* p = impl.plan().PlacementOf(node.get())) {
      if (p->provider != nullptr) n.provider = p->provider->name();
      n.declined = p->declined;
    }
    const NodeProvenance* prov = FindProvenance(node->name, &report);
    const bool made_by_pass = prov != nullptr && !prov->created_by.empty();
    n.created_by = CreatedBy(*node, &report);
    if (prov != nullptr) n.rewritten_by = prov->rewritten_by;
    if (!made_by_pass && original_model && !original_names.count(node->name))
      n.created_by = "the session (added after the optimizer, by no pass)";
    if (made_by_pass && original_model) {
      n.replaces = Replaced(*node, *original_model->graph, original_producers);
      for (const auto& r : n.replaces) replaced_by[r].push_back(node->name);
    }
    // The CPU kernels' variants (other providers choose their own, which this does not name).
    if (n.provider == "CPU") n.kernel = KernelChoiceText(*node, graph, types, facts);
    e.nodes.push_back(std::move(n));
  }
  // The model's nodes that a pass removed (a node a pass made and a later one removed is not the
  // model's: it shows only through the node that replaced it).
  for (const auto& [name, p] : report.provenance) {
    if (p.removed_by.empty() || !p.created_by.empty() || present.count(name)) continue;
    std::string why = RemovedText(p);
    auto r = replaced_by.find(name);
    if (r != replaced_by.end()) {
      why += "; replaced by";
      for (const auto& by : r->second) why += " " + by;
    }
    e.removed.emplace_back(name, why);
  }
  if (original_model) {
    for (const auto& n : original_model->graph->nodes)
      if (!n->name.empty() && !present.count(n->name) && report.provenance.count(n->name) == 0)
        e.removed.emplace_back(n->name, n->op_type + " (removed before the optimizer's passes ran)");
  }
  e.fusion_misses =
      FindFusionMisses(graph, static_cast<OptLevel>(static_cast<int>(impl.options().graph_optimization_level)));
  return e;
}

}  // namespace onyx
