#include "optimizer/graph_editor.h"

#include <algorithm>

#include "base/check.h"

namespace onyx {
namespace {

void CollectNames(const ir::Graph& g, std::unordered_set<std::string>& names) {
  for (const auto& in : g.inputs) names.insert(in.name);
  for (const auto& [n, t] : g.initializers) names.insert(n);
  for (const auto& node : g.nodes) {
    names.insert(node->name);
    for (const auto& o : node->outputs) names.insert(o);
    for (const auto& a : node->attributes) {
      if (a.g) CollectNames(*a.g, names);
      for (const auto& sub : a.graphs) CollectNames(*sub, names);
    }
  }
}

std::vector<std::string> SubgraphReads(const ir::Node& node) {
  std::vector<std::string> names;
  for (const auto& a : node.attributes) {
    if (a.g)
      for (auto& n : a.g->OuterScopeNames()) names.push_back(std::move(n));
    for (const auto& sub : a.graphs)
      for (auto& n : sub->OuterScopeNames()) names.push_back(std::move(n));
  }
  return names;
}

// Renames reads of an outer value inside a subgraph (values it defines itself are untouched).
void RenameOuterReads(ir::Graph& g, const std::string& from, const std::string& to) {
  if (g.DefinedNames().count(from)) return;
  for (auto& node : g.nodes) {
    for (auto& in : node->inputs)
      if (in == from) in = to;
    for (auto& a : node->attributes) {
      if (a.g) RenameOuterReads(*a.g, from, to);
      for (auto& sub : a.graphs) RenameOuterReads(*sub, from, to);
    }
  }
  for (auto& out : g.outputs)
    if (out.name == from) out.name = to;
}

const std::vector<ir::Node*> kNoNodes;

}  // namespace

GraphEditor::GraphEditor(ir::Graph& graph, std::map<std::string, int64_t> opset_imports)
    : graph_(graph), opset_imports_(std::move(opset_imports)) {}

void GraphEditor::EnsureIndexed() const {
  if (!indexed_) const_cast<GraphEditor*>(this)->Index();
}

void GraphEditor::Index() {
  indexed_ = true;
  producer_.clear();
  consumers_.clear();
  names_.reset();
  for (const auto& node : graph_.nodes) {
    if (removed_.count(node.get())) continue;
    for (const auto& o : node->outputs)
      if (!o.empty()) producer_[o] = node.get();
    for (const auto& in : node->inputs)
      if (!in.empty()) AddUse(in, node.get());
    for (const auto& n : SubgraphReads(*node)) AddUse(n, node.get());
  }
}

void GraphEditor::AddUse(const std::string& value, ir::Node* node) {
  auto& users = consumers_[value];
  if (std::find(users.begin(), users.end(), node) == users.end()) users.push_back(node);
}

void GraphEditor::RemoveUse(const std::string& value, ir::Node* node) {
  auto it = consumers_.find(value);
  if (it == consumers_.end()) return;
  // The node may still read the value through another input.
  for (const auto& in : node->inputs)
    if (in == value) return;
  for (const auto& n : SubgraphReads(*node))
    if (n == value) return;
  auto& users = it->second;
  users.erase(std::remove(users.begin(), users.end(), node), users.end());
}

std::vector<ir::Node*> GraphEditor::Nodes() const {
  std::vector<ir::Node*> result;
  for (const auto& node : graph_.nodes)
    if (!removed_.count(node.get())) result.push_back(node.get());
  return result;
}

std::vector<ir::Node*> GraphEditor::NodesOfType(const std::string& op_type, const std::string& domain) const {
  std::vector<ir::Node*> result;
  for (const auto& node : graph_.nodes)
    if (!removed_.count(node.get()) && node->op_type == op_type && node->domain == domain) result.push_back(node.get());
  return result;
}

ir::Node* GraphEditor::Producer(const std::string& value) const {
  EnsureIndexed();
  auto it = producer_.find(value);
  return it == producer_.end() ? nullptr : it->second;
}

const std::vector<ir::Node*>& GraphEditor::Consumers(const std::string& value) const {
  EnsureIndexed();
  auto it = consumers_.find(value);
  return it == consumers_.end() ? kNoNodes : it->second;
}

size_t GraphEditor::UseCount(const std::string& value) const {
  size_t n = Consumers(value).size();
  for (const auto& out : graph_.outputs)
    if (out.name == value) ++n;
  return n;
}

const Tensor* GraphEditor::Constant(const std::string& value) const {
  for (const ir::Graph* g = &graph_; g != nullptr; g = g->parent) {
    if (const Tensor* t = g->FindInitializer(value)) {
      if (g->IsGraphInput(value) && !fold_overridable_) return nullptr;
      return t;
    }
    if (g->IsGraphInput(value)) return nullptr;
    if (g == &graph_ && Producer(value) != nullptr) return nullptr;
  }
  return nullptr;
}

std::vector<const ir::Node*> GraphEditor::LiveNodesInOrder() const {
  // New nodes sit at the end of graph.nodes: order live nodes by their dependencies, depth
  // first with an explicit stack (a long chain of nodes must not overflow the call stack).
  std::vector<const ir::Node*> order;
  std::unordered_set<const ir::Node*> placed;
  std::vector<std::pair<const ir::Node*, size_t>> stack;  // node, next input to visit
  for (const auto& root : graph_.nodes) {
    if (removed_.count(root.get()) || !placed.insert(root.get()).second) continue;
    stack.emplace_back(root.get(), 0);
    while (!stack.empty()) {
      auto& [n, next] = stack.back();
      if (next < n->inputs.size()) {
        const ir::Node* p = Producer(n->inputs[next++]);
        if (p != nullptr && placed.insert(p).second) stack.emplace_back(p, 0);
        continue;
      }
      order.push_back(n);
      stack.pop_back();
    }
  }
  return order;
}

const TypeInfo* GraphEditor::TypeOf(const std::string& value) {
  EnsureTypes();
  auto it = types_->find(value);
  return it == types_->end() ? nullptr : it->second.get();
}

void GraphEditor::EnsureTypes() {
  if (types_) return;
  types_ = InferNodeTypes(graph_, LiveNodesInOrder());
  ++type_inferences_;
}

void GraphEditor::TypesChanged() {
  if (frozen_types_ > 0)
    edited_while_frozen_ = true;
  else
    types_.reset();
}

GraphEditor::FrozenTypes::~FrozenTypes() {
  if (--editor_.frozen_types_ > 0 || !editor_.edited_while_frozen_) return;
  editor_.edited_while_frozen_ = false;
  editor_.types_.reset();
}

TypeMap GraphEditor::TypeSnapshot() {
  EnsureTypes();
  return *types_;
}

const std::vector<Dim>* GraphEditor::DimsOf(const std::string& value) {
  const TypeInfo* t = TypeOf(value);
  return t && t->kind == TypeInfo::Kind::kTensor && t->shape ? &*t->shape : nullptr;
}

std::string GraphEditor::UniqueName(const std::string& hint) {
  if (!names_) {
    names_.emplace();
    CollectNames(graph_, *names_);
  }
  std::string name = hint;
  while (names_->count(name)) name = hint + "_" + std::to_string(++counter_);
  names_->insert(name);
  return name;
}

ir::Node* GraphEditor::AddNode(const std::string& op_type, const std::string& domain, std::vector<std::string> inputs,
                               std::vector<std::string> outputs, const std::string& name_hint) {
  EnsureIndexed();
  modified_ = true;
  TypesChanged();
  auto node = std::make_unique<ir::Node>();
  node->op_type = op_type;
  node->domain = domain;
  node->name = UniqueName(name_hint);
  auto opset = opset_imports_.find(domain);
  node->opset = opset == opset_imports_.end() ? 1 : static_cast<int>(opset->second);
  node->inputs = std::move(inputs);
  node->outputs = std::move(outputs);
  ir::Node* raw = graph_.AddNode(std::move(node));
  for (const auto& o : raw->outputs) {
    if (o.empty()) continue;
    if (names_) names_->insert(o);
    producer_[o] = raw;
  }
  for (const auto& in : raw->inputs)
    if (!in.empty()) AddUse(in, raw);
  return raw;
}

void GraphEditor::RemoveNode(ir::Node* node) {
  EnsureIndexed();
  modified_ = true;
  TypesChanged();
  if (!removed_.insert(node).second) return;
  std::vector<std::string> reads = node->inputs;
  for (auto& n : SubgraphReads(*node)) reads.push_back(std::move(n));
  for (const auto& in : reads) {
    auto it = consumers_.find(in);
    if (it == consumers_.end()) continue;
    auto& users = it->second;
    users.erase(std::remove(users.begin(), users.end(), node), users.end());
  }
  for (const auto& o : node->outputs) {
    auto it = producer_.find(o);
    if (it != producer_.end() && it->second == node) producer_.erase(it);
  }
}

void GraphEditor::SetInput(ir::Node* node, size_t index, const std::string& value) {
  EnsureIndexed();
  modified_ = true;
  TypesChanged();
  ONYX_CHECK(index < node->inputs.size() + 1, kInvalidArgument, "SetInput index out of range");
  if (index == node->inputs.size()) node->inputs.emplace_back();
  const std::string old = node->inputs[index];
  node->inputs[index] = value;
  if (!old.empty()) RemoveUse(old, node);
  if (!value.empty()) AddUse(value, node);
}

void GraphEditor::ReplaceAllUses(const std::string& from, const std::string& to) {
  EnsureIndexed();
  modified_ = true;
  TypesChanged();
  if (from == to) return;
  if (IsGraphOutput(from)) {
    // The output keeps its name: give `to`'s producer the output's name instead.
    ir::Node* p = Producer(to);
    const bool renamable = p != nullptr && !IsGraphOutput(to) && !graph_.IsGraphInput(to) && !graph_.IsInitializer(to);
    if (!renamable) {
      // Keep a copy node so the graph output still has a producer of its own.
      for (ir::Node* user : std::vector<ir::Node*>(Consumers(from)))
        for (size_t i = 0; i < user->inputs.size(); ++i)
          if (user->inputs[i] == from) SetInput(user, i, to);
      ir::Node* producer = Producer(from);
      if (producer) {
        for (auto& o : producer->outputs)
          if (o == from) o = UniqueName(from + "_unused");
        producer_.erase(from);
      }
      AddNode("Identity", "", {to}, {from}, from + "_identity");
      return;
    }
    ir::Node* old_producer = Producer(from);
    if (old_producer) {
      for (auto& o : old_producer->outputs)
        if (o == from) o = UniqueName(from + "_unused");
      producer_.erase(from);
    }
    // Rename `to` to `from` everywhere.
    for (auto& o : p->outputs)
      if (o == to) o = from;
    producer_.erase(to);
    producer_[from] = p;
    for (ir::Node* user : std::vector<ir::Node*>(Consumers(to))) {
      for (auto& in : user->inputs)
        if (in == to) in = from;
      for (auto& a : user->attributes) {
        if (a.g) RenameOuterReads(*a.g, to, from);
        for (auto& sub : a.graphs) RenameOuterReads(*sub, to, from);
      }
      AddUse(from, user);
    }
    consumers_.erase(to);
    return;
  }
  for (ir::Node* user : std::vector<ir::Node*>(Consumers(from))) {
    for (auto& in : user->inputs)
      if (in == from) in = to;
    for (auto& a : user->attributes) {
      if (a.g) RenameOuterReads(*a.g, from, to);
      for (auto& sub : a.graphs) RenameOuterReads(*sub, from, to);
    }
    AddUse(to, user);
  }
  consumers_.erase(from);
}

void GraphEditor::RemoveUnreadInitializers() {
  EnsureIndexed();
  // Initializers nothing reads (and that are not graph inputs/outputs) go.
  for (auto it = graph_.initializers.begin(); it != graph_.initializers.end();) {
    if (!consumers_.count(it->first) && !graph_.IsGraphInput(it->first) && !graph_.IsGraphOutput(it->first)) {
      it = graph_.initializers.erase(it);
      modified_ = true;  // the name may be made again, with another type: inferred types no longer hold
      TypesChanged();
    } else {
      ++it;
    }
  }
}

std::string GraphEditor::AddInitializer(const std::string& name_hint, Tensor value) {
  modified_ = true;
  TypesChanged();
  const std::string name = UniqueName(name_hint);
  graph_.initializers[name] = std::move(value);
  return name;
}

void GraphEditor::Finish(bool changed) {
  changed = changed || modified_;
  if (changed) {
    auto& nodes = graph_.nodes;
    nodes.erase(std::remove_if(nodes.begin(), nodes.end(), [&](const auto& n) { return removed_.count(n.get()) != 0; }),
                nodes.end());
    removed_.clear();
    Index();
  }
  // A graph nothing changed keeps its initializers: an editor that never looked at the graph's
  // uses has no index to tell which are read, and the manager drops unread ones at the end.
  if (indexed_) RemoveUnreadInitializers();
  for (auto& node : graph_.nodes)
    for (auto& a : node->attributes) {
      if (a.g) a.g->parent = &graph_;
      for (auto& sub : a.graphs) sub->parent = &graph_;
    }
  if (!changed) return;
  graph_.SortTopologically();
  indexed_ = false;  // the maps still hold, but their reader lists follow the old order
  modified_ = false;
}

void GraphEditor::AdoptTypes(TypeMap types) {
  if (!types_) types_ = std::move(types);
}

std::optional<TypeMap> GraphEditor::ReleaseTypes() {
  std::optional<TypeMap> types = std::move(types_);
  types_.reset();
  return types;
}

}  // namespace onyx
