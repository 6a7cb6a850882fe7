#include "providers/cuda/device_capability.h"

#include <algorithm>
#include <unordered_set>

#include "ops/shape_inference.h"
#include "providers/cuda/kernel_types.h"

namespace onyx {
namespace {

// Nodes that compute shapes: Shape and Size, and nodes whose inputs are all theirs or constants.
std::unordered_set<const ir::Node*> ShapeComputingNodes(const ir::Graph& graph) {
  std::unordered_set<std::string> shape_values;
  std::unordered_set<const ir::Node*> nodes;
  for (const auto& node : graph.nodes) {
    bool shape = node->domain.empty() && (node->op_type == "Shape" || node->op_type == "Size");
    if (!shape) {
      bool any = false, all = true;
      for (const auto& in : node->inputs) {
        if (in.empty()) continue;
        if (shape_values.count(in)) {
          any = true;
        } else if (!graph.IsInitializer(in) || graph.IsGraphInput(in)) {
          all = false;
        }
      }
      shape = any && all;
    }
    if (!shape) continue;
    nodes.insert(node.get());
    for (const auto& out : node->outputs) shape_values.insert(out);
  }
  return nodes;
}

DataType DtypeOf(const ir::Graph& graph, const TypeMap& types, const std::string& name) {
  if (const Tensor* t = graph.FindInitializer(name)) return t->dtype();
  auto it = types.find(name);
  if (it != types.end() && it->second && it->second->kind == TypeInfo::Kind::kTensor) return it->second->elem_type;
  for (const auto& in : graph.inputs)
    if (in.name == name && in.type && in.type->kind == TypeInfo::Kind::kTensor) return in.type->elem_type;
  return DataType::kUndefined;
}

std::string TypeNames(const std::vector<DataType>& types) {
  std::vector<std::string> names;
  for (DataType t : types) names.emplace_back(DataTypeName(t));
  return StrJoin(names);
}

}  // namespace

std::vector<NodeClaim> DeviceCapability(const ir::Graph& graph, const ExecutionProvider& provider) {
  TypeMap types;
  try {
    types = InferGraphTypes(graph);
  } catch (const Error&) {
    // Types stay unknown: nodes needing them are declined below, saying so.
  }
  const auto shape_nodes = ShapeComputingNodes(graph);
  std::vector<NodeClaim> claims;
  claims.reserve(graph.nodes.size());
  for (const auto& node : graph.nodes) {
    NodeClaim claim = provider.ClaimByRegistry(*node);
    if (claim.claimed && shape_nodes.count(node.get())) {
      claim = {false, "it computes a shape (from Shape/Size outputs and constants): kept on the CPU, where the "
                      "nodes reading the shape need it, instead of a device round trip"};
    }
    const KernelTypes* rule = FindKernelTypes(provider.name(), node->domain, node->op_type);
    if (claim.claimed && rule != nullptr && rule->type_input < node->inputs.size()) {
      const std::string& input = node->inputs[rule->type_input];
      const DataType dtype = DtypeOf(graph, types, input);
      if (dtype == DataType::kUndefined) {
        claim = {false, StrCat("the dtype of input '", input, "' is not known before running, and ", provider.name(),
                               "'s ", node->op_type, " kernel takes only ", TypeNames(rule->types))};
      } else if (std::find(rule->types.begin(), rule->types.end(), dtype) == rule->types.end()) {
        claim = {false, StrCat("unsupported dtype ", DataTypeName(dtype), " (input '", input, "'): ", provider.name(),
                               "'s ", node->op_type, " kernel supports ", TypeNames(rule->types))};
      }
    }
    if (claim.claimed && rule != nullptr && rule->check) {
      const std::string why = rule->check(*node);
      if (!why.empty()) claim = {false, why};
    }
    claims.push_back(std::move(claim));
  }
  return claims;
}

}  // namespace onyx
