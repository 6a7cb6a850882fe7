#include "onnx/function_inliner.h"

#include <unordered_map>

#include "base/check.h"

namespace onyx {
namespace {

constexpr int kMaxInlineDepth = 32;

// Renames the values a (sub)graph reads from the function's scope.
void RenameOuterReferences(ir::Graph& graph, const std::unordered_map<std::string, std::string>& rename) {
  const auto defined = graph.DefinedNames();
  auto fix = [&](std::string& name) {
    if (name.empty() || defined.count(name)) return;
    auto it = rename.find(name);
    if (it != rename.end()) name = it->second;
  };
  for (auto& node : graph.nodes) {
    for (auto& in : node->inputs) fix(in);
    for (auto& attr : node->attributes) {
      if (attr.g) RenameOuterReferences(*attr.g, rename);
      for (auto& sub : attr.graphs) RenameOuterReferences(*sub, rename);
    }
  }
  for (auto& out : graph.outputs) fix(out.name);
}

// Replaces attributes that refer to the caller's attributes (ref_attr_name), recursively.
void SubstituteAttributes(std::vector<ir::Attribute>& attrs, const std::unordered_map<std::string, ir::Attribute>& caller) {
  std::vector<ir::Attribute> result;
  for (auto& a : attrs) {
    if (!a.ref_attr_name.empty()) {
      auto it = caller.find(a.ref_attr_name);
      if (it == caller.end()) continue;  // not given and no default: the attribute is absent
      ir::Attribute copy = it->second.Clone();
      copy.name = a.name;
      copy.ref_attr_name.clear();
      result.push_back(std::move(copy));
      continue;
    }
    auto substitute_in = [&](ir::Graph& g) {
      for (auto& n : g.nodes) SubstituteAttributes(n->attributes, caller);
    };
    if (a.g) substitute_in(*a.g);
    for (auto& sub : a.graphs) substitute_in(*sub);
    result.push_back(std::move(a));
  }
  attrs = std::move(result);
}

class Inliner {
 public:
  explicit Inliner(const FunctionTable& functions) : functions_(functions) {}

  void Run(ir::Graph& graph, int depth) {
    ONYX_CHECK(depth < kMaxInlineDepth, kInvalidModel, "model-local functions call each other more than ",
               kMaxInlineDepth, " deep (recursion?)");
    std::vector<std::unique_ptr<ir::Node>> result;
    bool expanded = false;
    for (auto& node : graph.nodes) {
      const FunctionDef* fn = Find(*node);
      if (fn == nullptr) {
        for (auto& attr : node->attributes) {
          if (attr.g) Run(*attr.g, depth);
          for (auto& sub : attr.graphs) Run(*sub, depth);
        }
        result.push_back(std::move(node));
        continue;
      }
      Expand(*node, *fn, result);
      expanded = true;
    }
    graph.nodes = std::move(result);
    if (expanded) Run(graph, depth + 1);  // bodies may call other functions
    for (auto& node : graph.nodes)
      for (auto& attr : node->attributes) {
        if (attr.g) attr.g->parent = &graph;
        for (auto& sub : attr.graphs) sub->parent = &graph;
      }
  }

 private:
  const FunctionDef* Find(const ir::Node& node) const {
    auto it = functions_.find(FunctionKey(node.domain, node.op_type, node.overload));
    return it == functions_.end() ? nullptr : &it->second;
  }

  void Expand(const ir::Node& call, const FunctionDef& fn, std::vector<std::unique_ptr<ir::Node>>& out) {
    ONYX_CHECK(call.inputs.size() <= fn.inputs.size() && call.outputs.size() <= fn.outputs.size(), kInvalidModel,
               call.Describe(), " passes ", call.inputs.size(), " inputs and ", call.outputs.size(),
               " outputs to function '", fn.name, "', which takes ", fn.inputs.size(), " and ", fn.outputs.size());
    const std::string prefix = StrCat(call.name.empty() ? fn.name : call.name, "/", counter_++, "/");
    std::unordered_map<std::string, std::string> rename;
    for (size_t i = 0; i < fn.inputs.size(); ++i) rename[fn.inputs[i]] = i < call.inputs.size() ? call.inputs[i] : "";
    for (size_t i = 0; i < fn.outputs.size(); ++i)
      rename[fn.outputs[i]] = i < call.outputs.size() ? call.outputs[i] : "";
    auto map_name = [&](const std::string& name) -> std::string {
      if (name.empty()) return name;
      auto it = rename.find(name);
      if (it != rename.end()) return it->second;
      return rename[name] = prefix + name;  // a value internal to the body
    };
    std::unordered_map<std::string, ir::Attribute> caller_attrs;
    for (const auto& a : fn.attribute_defaults) caller_attrs[a.name] = a;
    for (const auto& a : call.attributes) caller_attrs[a.name] = a;

    for (const auto& body_node : fn.nodes) {
      auto node = std::make_unique<ir::Node>(*body_node);
      for (auto& a : node->attributes) a = a.Clone();
      for (auto& in : node->inputs) in = map_name(in);
      for (auto& o : node->outputs) o = map_name(o);
      node->name = prefix + (body_node->name.empty() ? body_node->op_type : body_node->name);
      SubstituteAttributes(node->attributes, caller_attrs);
      for (auto& attr : node->attributes) {
        if (attr.g) RenameOuterReferences(*attr.g, rename);
        for (auto& sub : attr.graphs) RenameOuterReferences(*sub, rename);
      }
      out.push_back(std::move(node));
    }
  }

  const FunctionTable& functions_;
  int counter_ = 0;
};

}  // namespace

std::string FunctionKey(const std::string& domain, const std::string& name, const std::string& overload) {
  return domain + "\x1f" + name + "\x1f" + overload;
}

void InlineFunctions(ir::Graph& graph, const FunctionTable& functions) { Inliner(functions).Run(graph, 0); }

}  // namespace onyx
