#include "runtime/deferred_widenings.h"

#include <unordered_set>

#include "providers/cpu/kernels/linalg/deferred_half_widening.h"

namespace onyx {
namespace {

bool PacksInput1(const ir::Node& node) {
  if (node.domain.empty()) return node.op_type == "MatMul" || node.op_type == "Gemm";
  return node.domain == "com.microsoft" && (node.op_type == "FusedMatMul" || node.op_type == "Attention");
}

}  // namespace

void WriteWideningsOtherReadersNeed(ir::Graph& graph) {
  std::unordered_set<std::string> other;
  for (const auto& out : graph.outputs) other.insert(out.name);
  for (const auto& node : graph.nodes) {
    for (size_t i = 0; i < node->inputs.size(); ++i)
      if (i != 1 || !PacksInput1(*node)) other.insert(node->inputs[i]);
    for (const auto& a : node->attributes) {
      if (a.g)
        for (auto& n : a.g->OuterScopeNames()) other.insert(std::move(n));
      for (const auto& sub : a.graphs)
        for (auto& n : sub->OuterScopeNames()) other.insert(std::move(n));
    }
  }
  for (const auto& [name, t] : graph.initializers)
    if (other.count(name) || graph.IsGraphInput(name)) MaterializeDeferredWidening(t);
}

void WriteAllDeferredWidenings(ir::Graph& graph) {
  for (const auto& [name, t] : graph.initializers) MaterializeDeferredWidening(t);
}

}  // namespace onyx
