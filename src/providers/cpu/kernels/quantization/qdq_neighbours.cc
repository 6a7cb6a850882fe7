#include "providers/cpu/kernels/quantization/qdq_neighbours.h"

#include <string>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

using ProducerMap = std::unordered_map<std::string, ir::Node*>;
using ConsumerMap = std::unordered_map<std::string, std::vector<ir::Node*>>;

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

bool FedByDequantize(const ProducerMap& producers, const std::string& value) {
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

bool FeedsQuantize(const ConsumerMap& consumers, const std::string& value, int hops) {
  auto it = consumers.find(value);
  if (it == consumers.end()) return false;
  for (const ir::Node* c : it->second) {
    if (c->op_type == "QuantizeLinear" || c->op_type == "DynamicQuantizeLinear") return true;
    if (hops < kMaxHops && PassesGrid(*c) && !c->outputs.empty() && FeedsQuantize(consumers, c->outputs[0], hops + 1))
      return true;
  }
  return false;
}

bool IsBetween(const ProducerMap& producers, const ConsumerMap& consumers, const ir::Node& node) {
  for (size_t i = 0; i < node.inputs.size() && i < 2; ++i)  // the data and the weight
    if (!node.inputs[i].empty() && FedByDequantize(producers, node.inputs[i])) return true;
  if (node.outputs.empty() || node.outputs[0].empty()) return false;
  return FeedsQuantize(consumers, node.outputs[0], 0);
}

bool IsQuantizingOp(const std::string& op) {
  return op == "QuantizeLinear" || op == "DynamicQuantizeLinear" || op == "ConvInteger" || op == "MatMulInteger" ||
         op == "MatMulIntegerToFloat" || op.rfind("QLinear", 0) == 0 || op.rfind("DynamicQuantize", 0) == 0;
}

bool HoldsQuantizingOp(const ir::Graph* graph) {
  // An If / Loop / Scan body counts with the graphs around it: its results are quantized there.
  for (const ir::Graph* g = graph; g != nullptr; g = g->parent)
    for (const auto& n : g->nodes)
      if (IsQuantizingOp(n->op_type)) return true;
  return false;
}

}  // namespace

bool IsBetweenQuantizeNodes(const KernelInfo& info) {
  const ir::Graph* graph = info.graph();
  return graph != nullptr && IsBetweenQuantizeNodes(*graph, info.node(), info.graph_facts());
}

bool IsBetweenQuantizeNodes(const ir::Graph& graph, const ir::Node& node, GraphFacts* facts) {
  if (facts == nullptr) return IsBetween(graph.Producers(), graph.Consumers(), node);
  const auto& producers = facts->Get<ProducerMap>("producers", [&graph] { return graph.Producers(); });
  const auto& consumers = facts->Get<ConsumerMap>("consumers", [&graph] { return graph.Consumers(); });
  return IsBetween(producers, consumers, node);
}

bool InQuantizedGraph(const KernelInfo& info) {
  GraphFacts* facts = info.graph_facts();
  if (facts == nullptr) return HoldsQuantizingOp(info.graph());
  return facts->Get<bool>("quantized graph", [&info] { return HoldsQuantizingOp(info.graph()); });
}

}  // namespace onyx
