// Removes nodes that provably return their input unchanged (basic): Cast to the input's type,
// Reshape/Expand to the input's own shape, Transpose with the identity permutation, Slice over
// the whole tensor, Squeeze/Unsqueeze with nothing to do, single-input Concat, zero Pad.
#include <limits>

#include "optimizer/pass.h"
#include "optimizer/pattern_util.h"

namespace onyx {
namespace {

// Same dims: known sizes equal, or the same named symbol.
bool SameDims(const std::vector<Dim>* a, const std::vector<Dim>* b) {
  if (a == nullptr || b == nullptr || a->size() != b->size()) return false;
  for (size_t i = 0; i < a->size(); ++i) {
    const Dim &x = (*a)[i], &y = (*b)[i];
    if (x.known() != y.known()) return false;
    if (x.known() ? x.value != y.value : (x.param.empty() || x.param != y.param)) return false;
  }
  return true;
}

bool IsIdentityPerm(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return !perm.empty();
}

class NoOpElimination final : public Pass {
 public:
  std::string name() const override { return "NoOpElimination"; }
  OptLevel level() const override { return OptLevel::kBasic; }

  int Apply(PassContext& ctx) override {
    GraphEditor& editor = ctx.editor;
    int removed = 0;
    for (ir::Node* node : editor.Nodes()) {
      if (!node->domain.empty() || node->inputs.empty() || node->inputs[0].empty() || node->outputs.size() != 1)
        continue;
      if (!IsNoOp(*node, editor)) continue;
      const std::string in = node->inputs[0], out = node->outputs[0];
      if (editor.IsGraphOutput(out) && (editor.IsGraphOutput(in) || !editor.Producer(in))) continue;
      editor.RemoveNode(node);
      editor.ReplaceAllUses(out, in);
      ++ctx.counts["removed no-op " + node->op_type];
      ++removed;
    }
    return removed;
  }

 private:
  static bool IsNoOp(const ir::Node& node, GraphEditor& editor) {
    const std::string& op = node.op_type;
    const std::string& in = node.inputs[0];
    if (op == "Cast") {
      const TypeInfo* t = editor.TypeOf(in);
      return t && t->kind == TypeInfo::Kind::kTensor && t->elem_type != DataType::kUndefined &&
             static_cast<int64_t>(t->elem_type) == AttrInt(node, "to", -1);
    }
    if (op == "Reshape" || op == "Expand") return SameDims(editor.DimsOf(in), editor.DimsOf(node.outputs[0]));
    if (op == "Transpose") {
      const auto* dims = editor.DimsOf(in);
      auto perm = AttrInts(node, "perm");
      return dims && perm.size() == dims->size() && IsIdentityPerm(perm);
    }
    if (op == "Concat") return node.inputs.size() == 1;
    if (op == "Squeeze" || op == "Unsqueeze") {
      if (node.opset >= 13) return node.inputs.size() < 2 ? op == "Unsqueeze" : false;
      return AttrInts(node, "axes").empty() && op == "Unsqueeze";
    }
    if (op == "Slice") return WholeSlice(node, editor);
    if (op == "Pad") {
      auto pads = node.opset >= 11 ? ConstantInts(editor, node, 1) : std::optional<std::vector<int64_t>>(AttrInts(node, "pads"));
      if (!pads || pads->empty()) return false;
      for (int64_t p : *pads)
        if (p != 0) return false;
      return true;
    }
    return false;
  }

  // Slice with steps 1, starts 0 and ends past every sliced dim.
  static bool WholeSlice(const ir::Node& node, GraphEditor& editor) {
    if (node.opset < 10) return false;
    auto starts = ConstantInts(editor, node, 1), ends = ConstantInts(editor, node, 2);
    const auto* dims = editor.DimsOf(node.inputs[0]);
    if (!starts || !ends || !dims) return false;
    std::vector<int64_t> axes, steps;
    if (node.inputs.size() > 3 && !node.inputs[3].empty()) {
      auto a = ConstantInts(editor, node, 3);
      if (!a) return false;
      axes = *a;
    } else {
      for (size_t i = 0; i < starts->size(); ++i) axes.push_back(static_cast<int64_t>(i));
    }
    if (node.inputs.size() > 4 && !node.inputs[4].empty()) {
      auto s = ConstantInts(editor, node, 4);
      if (!s) return false;
      steps = *s;
    }
    // Lists of other lengths are the kernel's error to report, not a no-op (a fuzzed model
    // with fewer axes than starts read past the axes here).
    if (ends->size() != starts->size() || axes.size() != starts->size() ||
        (!steps.empty() && steps.size() != starts->size()))
      return false;
    const int64_t rank = static_cast<int64_t>(dims->size());
    for (size_t i = 0; i < starts->size(); ++i) {
      int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
      if (axis < 0 || axis >= rank) return false;
      if (!steps.empty() && steps[i] != 1) return false;
      if ((*starts)[i] != 0) return false;
      const int64_t end = (*ends)[i];
      const Dim& d = (*dims)[axis];
      if (end != std::numeric_limits<int64_t>::max() && !(d.known() && end >= d.value)) return false;
    }
    return true;
  }
};

ONYX_REGISTER_PASS(NoOpElimination, 60);

}  // namespace
}  // namespace onyx
