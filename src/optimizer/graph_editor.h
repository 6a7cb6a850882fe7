// GraphEditor: what passes use to look at and change a graph. It keeps producer/consumer maps
// current as nodes are added, removed and rewired, names new values uniquely, and records
// which pass made or removed each node (for `onyx optimize --report`).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/graph.h"
#include "ops/shape_inference.h"

namespace onyx {

class GraphEditor {
 public:
  // opset_imports: the model's, so new nodes get their domain's version.
  explicit GraphEditor(ir::Graph& graph, std::map<std::string, int64_t> opset_imports = {});

  ir::Graph& graph() { return graph_; }
  const ir::Graph& graph() const { return graph_; }

  // Live nodes in topological order (removed nodes are skipped).
  std::vector<ir::Node*> Nodes() const;
  std::vector<ir::Node*> NodesOfType(const std::string& op_type, const std::string& domain = "") const;
  ir::Node* Producer(const std::string& value) const;
  // Nodes reading the value, including nodes whose subgraphs read it from the outer scope.
  const std::vector<ir::Node*>& Consumers(const std::string& value) const;
  // Whether the value is a graph output (outer graphs' outputs too, for subgraphs).
  bool IsGraphOutput(const std::string& value) const { return graph_.IsGraphOutput(value); }
  // Consumers plus graph outputs: how many places read the value.
  size_t UseCount(const std::string& value) const;

  // The static type of a value (inferred lazily, recomputed after the graph changes); null when
  // unknown. Dims may be symbolic or unknown.
  const TypeInfo* TypeOf(const std::string& value);
  // The value's dims when its rank is known.
  const std::vector<Dim>* DimsOf(const std::string& value);
  // Every value's type as inferred now, a copy later changes leave alone: for a pass whose
  // rewrites keep the types of the values it still reads (TypeOf infers anew after each).
  TypeMap TypeSnapshot();
  // The same for a pass that reads types through TypeOf / DimsOf (and the helpers built on
  // them): while the returned guard lives, edits leave the types inferred before them in place,
  // and values made meanwhile have none (TypeOf gives null, so a match on them fails). For a
  // fusion that replaces nodes by ones computing the same outputs. Without it each edit makes
  // the next TypeOf infer the whole graph again: quadratic in the rewrites (a 96-layer BERT).
  class FrozenTypes {
   public:
    explicit FrozenTypes(GraphEditor& editor) : editor_(editor) { ++editor_.frozen_types_; }
    ~FrozenTypes();
    FrozenTypes(const FrozenTypes&) = delete;
    FrozenTypes& operator=(const FrozenTypes&) = delete;

   private:
    GraphEditor& editor_;
  };
  FrozenTypes FreezeTypes() { return FrozenTypes(*this); }
  // How many times this editor inferred the whole graph's types (the pass report sums it: a
  // pass whose count grows with its rewrites is quadratic on large graphs).
  int type_inferences() const { return type_inferences_; }
  // Whether the graph was changed through this editor (since the last Finish).
  bool modified() const { return modified_; }
  // Types inferred by an earlier editor of this graph, which nothing has changed since: the pass
  // manager hands them from one pass to the next until a pass changes a graph.
  void AdoptTypes(TypeMap types);
  std::optional<TypeMap> ReleaseTypes();

  // A constant tensor: an initializer no feed can override (unless allowed), in this graph or
  // an enclosing one. Null otherwise.
  const Tensor* Constant(const std::string& value) const;
  void set_fold_overridable(bool allow) { fold_overridable_ = allow; }

  // Adds a node with the model's opset for its domain (1 when the model does not import it;
  // passes may set another), inserted before the first consumer of its outputs when the graph is sorted
  // again at the end of the pass).
  ir::Node* AddNode(const std::string& op_type, const std::string& domain, std::vector<std::string> inputs,
                    std::vector<std::string> outputs, const std::string& name_hint);
  void RemoveNode(ir::Node* node);
  // Makes every reader of `from` read `to` instead (graph outputs keep their names: the editor
  // renames the producer's output instead when `from` is a graph output).
  void ReplaceAllUses(const std::string& from, const std::string& to);
  void SetInput(ir::Node* node, size_t index, const std::string& value);
  std::string AddInitializer(const std::string& name_hint, Tensor value);
  std::string UniqueName(const std::string& hint);

  // Removes initializers nothing reads anymore; sorts nodes again. Called by the manager, with
  // changed = false when the pass rewrote nothing: unless it changed something through the
  // editor, the index still holds, so the graph is neither indexed nor sorted again (silero_vad,
  // with large If branches, spent most of its session creation re-indexing after passes that
  // did nothing).
  void Finish(bool changed = true);
  void RemoveUnreadInitializers();

 private:
  // The producer/consumer maps are built on first use: most passes find nothing to rewrite in
  // most graphs (a model's subgraphs above all) by looking at op types alone.
  void EnsureIndexed() const;
  void Index();
  std::vector<const ir::Node*> LiveNodesInOrder() const;
  void AddUse(const std::string& value, ir::Node* node);
  void RemoveUse(const std::string& value, ir::Node* node);

  ir::Graph& graph_;
  bool indexed_ = false;
  std::unordered_map<std::string, ir::Node*> producer_;
  std::unordered_map<std::string, std::vector<ir::Node*>> consumers_;
  std::unordered_set<ir::Node*> removed_;
  bool modified_ = false;  // set by every change made through the editor
  // Every name in the graph and its subgraphs, collected when a pass first asks for a new one
  // (most editors never do; collecting them each time was a fifth of a subgraph model's creation).
  std::optional<std::unordered_set<std::string>> names_;
  bool fold_overridable_ = false;
  int counter_ = 0;
  std::optional<TypeMap> types_;  // reset by every change (at the end of a FreezeTypes scope)
  int frozen_types_ = 0;
  int type_inferences_ = 0;
  bool edited_while_frozen_ = false;
  void TypesChanged();
  void EnsureTypes();
  std::map<std::string, int64_t> opset_imports_;
};

}  // namespace onyx
