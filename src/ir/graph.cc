#include "ir/graph.h"

#include <algorithm>
#include <queue>

#include "base/check.h"

namespace onyx::ir {

Node* Graph::AddNode(std::unique_ptr<Node> node) {
  nodes.push_back(std::move(node));
  return nodes.back().get();
}

bool Graph::IsGraphInput(const std::string& value) const {
  for (const auto& in : inputs)
    if (in.name == value) return true;
  return false;
}

bool Graph::IsGraphOutput(const std::string& value) const {
  for (const auto& out : outputs)
    if (out.name == value) return true;
  return false;
}

const Tensor* Graph::FindInitializer(const std::string& value) const {
  auto it = initializers.find(value);
  return it == initializers.end() ? nullptr : &it->second;
}

std::unordered_set<std::string> Graph::DefinedNames() const {
  std::unordered_set<std::string> names;
  for (const auto& in : inputs) names.insert(in.name);
  for (const auto& [name, t] : initializers) names.insert(name);
  for (const auto& node : nodes)
    for (const auto& out : node->outputs)
      if (!out.empty()) names.insert(out);
  return names;
}

std::vector<std::string> Graph::OuterScopeNames() const {
  const auto defined = DefinedNames();
  std::vector<std::string> result;
  std::unordered_set<std::string> seen;
  auto note = [&](const std::string& name) {
    if (!name.empty() && !defined.count(name) && seen.insert(name).second) result.push_back(name);
  };
  for (const auto& node : nodes) {
    for (const auto& in : node->inputs) note(in);
    for (const auto& attr : node->attributes) {
      if (attr.g)
        for (const auto& n : attr.g->OuterScopeNames()) note(n);
      for (const auto& sub : attr.graphs)
        for (const auto& n : sub->OuterScopeNames()) note(n);
    }
  }
  for (const auto& out : outputs) note(out.name);
  return result;
}

namespace {

bool DefinedInAncestors(const Graph* g, const std::string& name) {
  for (; g != nullptr; g = g->parent) {
    if (g->IsGraphInput(name) || g->IsInitializer(name)) return true;
    for (const auto& node : g->nodes)
      for (const auto& out : node->outputs)
        if (out == name) return true;
  }
  return false;
}

}  // namespace

void Graph::SortTopologically() {
  // Kahn's algorithm, taking ready nodes in their original order (stable).
  std::unordered_map<std::string, size_t> producer;
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const auto& out : nodes[i]->outputs)
      if (!out.empty()) producer[out] = i;
  const size_t n = nodes.size();
  std::vector<size_t> missing(n, 0);
  std::vector<std::vector<size_t>> users(n);
  auto depends = [&](size_t i, const std::string& name) {
    auto it = producer.find(name);
    if (it == producer.end() || it->second == i) return;
    ++missing[i];
    users[it->second].push_back(i);
  };
  for (size_t i = 0; i < n; ++i) {
    for (const auto& in : nodes[i]->inputs)
      if (!in.empty()) depends(i, in);
    // Subgraphs read outer names implicitly: order their producers first too.
    for (const auto& attr : nodes[i]->attributes) {
      if (attr.g)
        for (const auto& name : attr.g->OuterScopeNames()) depends(i, name);
      for (const auto& sub : attr.graphs)
        for (const auto& name : sub->OuterScopeNames()) depends(i, name);
    }
  }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t i = 0; i < n; ++i)
    if (missing[i] == 0) ready.push(i);
  std::vector<std::unique_ptr<Node>> sorted;
  sorted.reserve(n);
  while (!ready.empty()) {
    const size_t i = ready.top();
    ready.pop();
    for (size_t u : users[i])
      if (--missing[u] == 0) ready.push(u);
    sorted.push_back(std::move(nodes[i]));
  }
  if (sorted.size() != n) {
    for (size_t i = 0; i < n; ++i)
      if (nodes[i]) ONYX_THROW(kInvalidModel, "graph '", name, "' has a cycle through ", nodes[i]->Describe());
  }
  nodes = std::move(sorted);
}

void Graph::Validate() const {
  std::unordered_set<std::string> defined;
  // by: the defining node, or null for a graph input or initializer (described only on failure).
  auto define = [&](const std::string& value, const Node* by, const char* what) {
    ONYX_CHECK(defined.insert(value).second, kInvalidModel, "graph '", name, "': value '", value,
               "' is defined twice (again by ", by != nullptr ? by->Describe() : std::string(what), ")");
  };
  for (const auto& in : inputs) {
    ONYX_CHECK(!in.name.empty(), kInvalidModel, "graph '", name, "' has an input with an empty name");
    define(in.name, nullptr, "a graph input");
  }
  for (const auto& [init_name, t] : initializers)
    if (!IsGraphInput(init_name)) define(init_name, nullptr, "an initializer");
  auto visible = [&](const std::string& value) {
    return defined.count(value) || (parent != nullptr && DefinedInAncestors(parent, value));
  };
  for (const auto& node : nodes) {
    for (size_t i = 0; i < node->inputs.size(); ++i) {
      const auto& in = node->inputs[i];
      if (in.empty()) continue;
      ONYX_CHECK(visible(in), kInvalidModel, "graph '", name, "': input ", i, " '", in, "' of ", node->Describe(),
                 " is not a graph input, an initializer or the output of an earlier node");
    }
    for (const auto& attr : node->attributes) {
      if (attr.g) attr.g->Validate();
      for (const auto& sub : attr.graphs) sub->Validate();
    }
    for (const auto& out : node->outputs)
      if (!out.empty()) define(out, node.get(), nullptr);
  }
  for (const auto& out : outputs)
    ONYX_CHECK(visible(out.name), kInvalidModel, "graph '", name, "': output '", out.name, "' is never produced");
}

std::unordered_map<std::string, Node*> Graph::Producers() const {
  std::unordered_map<std::string, Node*> result;
  for (const auto& node : nodes)
    for (const auto& out : node->outputs)
      if (!out.empty()) result[out] = node.get();
  return result;
}

std::unordered_map<std::string, std::vector<Node*>> Graph::Consumers() const {
  std::unordered_map<std::string, std::vector<Node*>> result;
  for (const auto& node : nodes) {
    for (const auto& in : node->inputs)
      if (!in.empty()) {
        auto& users = result[in];
        if (users.empty() || users.back() != node.get()) users.push_back(node.get());
      }
    for (const auto& attr : node->attributes) {
      std::vector<std::string> outer;
      if (attr.g) outer = attr.g->OuterScopeNames();
      for (const auto& sub : attr.graphs)
        for (auto& n : sub->OuterScopeNames()) outer.push_back(std::move(n));
      for (const auto& n : outer) {
        auto& users = result[n];
        if (users.empty() || users.back() != node.get()) users.push_back(node.get());
      }
    }
  }
  return result;
}

std::unique_ptr<Graph> Graph::Clone() const {
  auto g = std::make_unique<Graph>();
  g->name = name;
  g->doc_string = doc_string;
  g->inputs = inputs;
  g->outputs = outputs;
  g->initializers = initializers;
  g->value_types = value_types;
  g->parent = parent;
  for (const auto& node : nodes) {
    auto copy = std::make_unique<Node>(*node);
    for (auto& attr : copy->attributes) {
      attr = attr.Clone();
      if (attr.g) attr.g->parent = g.get();
      for (auto& sub : attr.graphs) sub->parent = g.get();
    }
    g->nodes.push_back(std::move(copy));
  }
  return g;
}

}  // namespace onyx::ir
