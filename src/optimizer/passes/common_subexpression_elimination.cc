// Common-subexpression elimination (basic): nodes with the same op, opset, inputs and
// attributes compute the same values, so later copies are replaced by the first. Small
// constant initializers with equal type, shape and bytes are merged first, which lets more
// nodes match (exporters emit one Constant per use).
#include <cstring>
#include <map>
#include <set>

#include "base/str_cat.h"
#include "optimizer/pass.h"

namespace onyx {
namespace {

const std::set<std::string> kNondeterministic = {"RandomNormal", "RandomUniform", "RandomNormalLike",
                                                 "RandomUniformLike", "Multinomial", "Bernoulli"};
constexpr int64_t kMaxMergedConstantBytes = 4096;

std::string TensorKey(const Tensor& t) {
  std::string key = StrCat(static_cast<int>(t.dtype()), ShapeToString(t.shape()), ":");
  if (t.dtype() == DataType::kString) {
    for (int64_t i = 0; i < t.size(); ++i) key += StrCat(t.data<std::string>()[i].size(), ":", t.data<std::string>()[i]);
  } else {
    key.append(static_cast<const char*>(t.raw_data()), static_cast<size_t>(t.byte_size()));
  }
  return key;
}

// A byte string that is equal for two attributes exactly when they are equal.
std::string AttributeKey(const ir::Attribute& a) {
  std::string key = StrCat(a.name, "|", static_cast<int>(a.type), "|", a.ref_attr_name, "|");
  switch (a.type) {
    case ir::AttrType::kFloat: key.append(reinterpret_cast<const char*>(&a.f), sizeof(a.f)); break;
    case ir::AttrType::kInt: key += std::to_string(a.i); break;
    case ir::AttrType::kString: key += StrCat(a.s.size(), ":", a.s); break;
    case ir::AttrType::kFloats: key.append(reinterpret_cast<const char*>(a.floats.data()), a.floats.size() * 4); break;
    case ir::AttrType::kInts:
      for (int64_t v : a.ints) key += std::to_string(v) + ",";
      break;
    case ir::AttrType::kStrings:
      for (const auto& s : a.strings) key += StrCat(s.size(), ":", s);
      break;
    case ir::AttrType::kTensor:
    case ir::AttrType::kSparseTensor: key += TensorKey(a.t); break;
    case ir::AttrType::kTensors:
    case ir::AttrType::kSparseTensors:
      for (const auto& t : a.tensors) key += TensorKey(t) + "#";
      break;
    default: return "";  // graphs, types: never merged
  }
  return key;
}

class CommonSubexpressionElimination final : public Pass {
 public:
  std::string name() const override { return "CommonSubexpressionElimination"; }
  OptLevel level() const override { return OptLevel::kBasic; }

  int Apply(PassContext& ctx) override { return MergeConstants(ctx) + MergeNodes(ctx); }

 private:
  static int MergeConstants(PassContext& ctx) {
    GraphEditor& editor = ctx.editor;
    ir::Graph& graph = editor.graph();
    std::map<std::string, std::string> first_of;
    std::vector<std::pair<std::string, std::string>> merges;
    for (const auto& [name, t] : graph.initializers) {
      if (t.byte_size() > kMaxMergedConstantBytes || graph.IsGraphInput(name) || graph.IsGraphOutput(name)) continue;
      auto [it, inserted] = first_of.emplace(TensorKey(t), name);
      if (!inserted) merges.emplace_back(name, it->second);
    }
    for (const auto& [dup, keep] : merges) editor.ReplaceAllUses(dup, keep);
    if (!merges.empty()) ctx.counts["merged constants"] += static_cast<int>(merges.size());
    return static_cast<int>(merges.size());
  }

  static int MergeNodes(PassContext& ctx) {
    GraphEditor& editor = ctx.editor;
    std::map<std::string, ir::Node*> first_of;
    int merged = 0;
    for (ir::Node* node : editor.Nodes()) {
      if (node->HasSubgraphs() || kNondeterministic.count(node->op_type) || node->outputs.empty()) continue;
      std::string key = StrCat(node->domain, "|", node->op_type, "|", node->opset, "|", node->outputs.size(), "|");
      for (const auto& in : node->inputs) key += StrCat(in.size(), ":", in);
      key += "|";
      bool mergeable = true;
      for (const auto& a : node->attributes) {
        std::string ak = AttributeKey(a);
        if (ak.empty()) mergeable = false;
        key += ak + ";";
      }
      if (!mergeable) continue;
      auto [it, inserted] = first_of.emplace(key, node);
      if (inserted) continue;
      ir::Node* keep = it->second;
      bool outputs_ok = true;
      for (size_t i = 0; i < node->outputs.size(); ++i)
        if (!node->outputs[i].empty() && keep->outputs[i].empty()) outputs_ok = false;
      if (!outputs_ok) continue;
      editor.RemoveNode(node);
      for (size_t i = 0; i < node->outputs.size(); ++i)
        if (!node->outputs[i].empty()) editor.ReplaceAllUses(node->outputs[i], keep->outputs[i]);
      ++ctx.counts["merged " + node->op_type];
      ++merged;
    }
    return merged;
  }
};

ONYX_REGISTER_PASS(CommonSubexpressionElimination, 30);

}  // namespace
}  // namespace onyx
