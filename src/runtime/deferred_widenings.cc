#include "runtime/deferred_widenings.h"

#include <unordered_set>

#include "providers/cpu/kernels/linalg/deferred_half_widening.h"

namespace onyx {
namespace {

// Whether the node's kernel reads input i from the float16 bits itself: packs it (MatMul, Gemm,
// FusedMatMul, Attention's B) or gathers rows of it (Gather's table).
bool ReadsHalfItself(const ir::Node& node, size_t i) {
  if (node.domain.empty())
    return (i == 1 && (node.op_type == "MatMul" || node.op_type == "Gemm")) || (i == 0 && node.op_type == "Gather");
  return i == 1 && node.domain == "com.microsoft" && (node.op_type == "FusedMatMul" || node.op_type == "Attention");
}

}  // namespace

void WriteWideningsOtherReadersNeed(ir::Graph& graph) {
  std::unordered_set<std::string> other;
  for (const auto& out : graph.outputs) other.insert(out.name);
  for (const auto& node : graph.nodes) {
    for (size_t i = 0; i < node->inputs.size(); ++i)
      if (!ReadsHalfItself(*node, i)) other.insert(node->inputs[i]);
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
