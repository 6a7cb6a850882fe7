// Graph: nodes, graph inputs/outputs, initializers (constant tensors) and known value types.
// Values are referred to by name. A subgraph (If/Loop/Scan body) points to its parent so that
// names it does not define resolve in the enclosing scopes.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/node.h"
#include "onyx/value.h"

namespace onyx::ir {

struct ValueInfo {
  std::string name;
  std::shared_ptr<const TypeInfo> type;  // may be null when unknown
  std::string doc_string;
};

class Graph {
 public:
  std::string name;
  std::string doc_string;
  std::vector<std::unique_ptr<Node>> nodes;  // kept in topological order
  std::vector<ValueInfo> inputs;
  std::vector<ValueInfo> outputs;
  std::map<std::string, Tensor> initializers;  // sorted: deterministic saving
  std::unordered_map<std::string, std::shared_ptr<const TypeInfo>> value_types;
  const Graph* parent = nullptr;

  Node* AddNode(std::unique_ptr<Node> node);
  bool IsGraphInput(const std::string& value) const;
  bool IsGraphOutput(const std::string& value) const;
  bool IsInitializer(const std::string& value) const { return initializers.count(value) != 0; }
  const Tensor* FindInitializer(const std::string& value) const;

  // Names defined in this graph: inputs, initializers and node outputs.
  std::unordered_set<std::string> DefinedNames() const;
  // Names this graph (and its nested subgraphs) read but do not define: its outer-scope
  // references, in first-use order.
  std::vector<std::string> OuterScopeNames() const;

  // Stable topological sort of `nodes`; throws naming a node on a cycle or on an input
  // nothing produces (subgraphs may read outer names).
  void SortTopologically();
  // Checks single assignment, that every input is defined before use, and that the outputs
  // exist. Throws Error(kInvalidModel) naming the node.
  void Validate() const;

  // Producer node of each value and consumer nodes of each value (rebuilt on each call).
  std::unordered_map<std::string, Node*> Producers() const;
  std::unordered_map<std::string, std::vector<Node*>> Consumers() const;

  std::unique_ptr<Graph> Clone() const;  // deep copy (parent pointer kept)
};

struct Model {
  int64_t ir_version = 0;
  std::string producer_name;
  std::string producer_version;
  std::string domain;
  int64_t model_version = 0;
  std::string doc_string;
  std::map<std::string, int64_t> opset_imports;  // normalized domain -> version
  std::vector<std::pair<std::string, std::string>> metadata_props;
  std::string path;  // the file it was read from; empty for bytes
  std::shared_ptr<Graph> graph;
  // Set by the loader when tensors view memory-mapped files: lets the session drop the pages
  // it has read once kernels have taken what they need (null otherwise).
  std::function<void()> release_mapped_pages;
};

}  // namespace onyx::ir
