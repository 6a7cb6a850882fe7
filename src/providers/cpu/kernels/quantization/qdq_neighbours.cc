#include "providers/cpu/kernels/quantization/qdq_neighbours.h"

#include <string>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

// Nodes that move values without arithmetic (so a quantized grid survives them), and the
// activations a conv fuses or that keep grid points (Relu / Clip of a quantized value).
bool PassesGrid(const ir::Node& n) {
  static const char* const kOps[] = {"ReorderToNchwc", "ReorderFromNchwc", "Identity", "Reshape", "Flatten",
                                     "Squeeze",        "Unsqueeze",        "Transpose", "Relu",    "Clip"};
  for (const char* op : kOps)
    if (n.op_type == op) return true;
  return false;
}

// How many pass-through nodes a search crosses at most (a reorder plus a reshape and so on).
constexpr int kMaxHops = 4;

bool FedByDequantize(const std::unordered_map<std::string, ir::Node*>& producers, const std::string& value) {
  std::string v = value;
  for (int hop = 0; hop <= kMaxHops && !v.empty(); ++hop) {
    auto it = producers.find(v);
    if (it == producers.end()) return false;
    const ir::Node& p = *it->second;
    if (p.op_type == "DequantizeLinear") return true;
    if (!PassesGrid(p) || p.inputs.empty()) return false;
    v = p.inputs[0];
  }
  return false;
}

bool FeedsQuantize(const std::unordered_map<std::string, std::vector<ir::Node*>>& consumers, const std::string& value,
                   int hops) {
  auto it = consumers.find(value);
  if (it == consumers.end()) return false;
  for (const ir::Node* c : it->second) {
    if (c->op_type == "QuantizeLinear" || c->op_type == "DynamicQuantizeLinear") return true;
    if (hops < kMaxHops && PassesGrid(*c) && !c->outputs.empty() && FeedsQuantize(consumers, c->outputs[0], hops + 1))
      return true;
  }
  return false;
}

}  // namespace

bool IsBetweenQuantizeNodes(const KernelInfo& info) {
  return info.graph() != nullptr && IsBetweenQuantizeNodes(*info.graph(), info.node());
}

bool IsBetweenQuantizeNodes(const ir::Graph& g, const ir::Node& node) {
  const ir::Graph* graph = &g;
  const auto producers = graph->Producers();
  for (size_t i = 0; i < node.inputs.size() && i < 2; ++i)  // the data and the weight
    if (!node.inputs[i].empty() && FedByDequantize(producers, node.inputs[i])) return true;
  if (node.outputs.empty() || node.outputs[0].empty()) return false;
  return FeedsQuantize(graph->Consumers(), node.outputs[0], 0);
}

bool InQuantizedGraph(const KernelInfo& info) {
  // An If / Loop / Scan body counts with the graphs around it: its results are quantized there.
  for (const ir::Graph* g = info.graph(); g != nullptr; g = g->parent)
    for (const auto& n : g->nodes) {
      const std::string& op = n->op_type;
      if (op == "QuantizeLinear" || op == "DynamicQuantizeLinear" || op == "ConvInteger" || op == "MatMulInteger" ||
          op == "MatMulIntegerToFloat" || op.rfind("QLinear", 0) == 0 || op.rfind("DynamicQuantize", 0) == 0)
        return true;
    }
  return false;
}

}  // namespace onyx
