// Folds shape computations whose answer is static (basic): Shape and Size of values with known
// dims, and Gather of known dims out of a Shape even when other dims are symbolic.
#include "optimizer/pass.h"
#include "optimizer/pattern_util.h"

namespace onyx {
namespace {

class ShapeFolding final : public Pass {
 public:
  std::string name() const override { return "ShapeFolding"; }
  OptLevel level() const override { return OptLevel::kBasic; }

  int Apply(PassContext& ctx) override {
    GraphEditor& editor = ctx.editor;
    int folded = 0;
    // A fold puts a constant of the inferred value in place of its node: the types stand.
    const auto frozen = editor.FreezeTypes();
    for (ir::Node* node : editor.Nodes()) {
      if (!node->domain.empty() || node->outputs.size() != 1 || node->outputs[0].empty()) continue;
      std::optional<Tensor> value;
      if (node->op_type == "Shape") value = FoldShape(*node, editor);
      else if (node->op_type == "Size") value = FoldSize(*node, editor);
      else if (node->op_type == "Gather") value = FoldGatherOfShape(*node, editor);
      if (!value) continue;
      const std::string out = node->outputs[0];
      editor.RemoveNode(node);
      editor.graph().initializers[out] = std::move(*value);
      ++ctx.counts["folded " + node->op_type];
      ++folded;
    }
    return folded;
  }

 private:
  static std::pair<int64_t, int64_t> ShapeRange(const ir::Node& shape_node, int64_t rank) {
    int64_t start = AttrInt(shape_node, "start", 0), end = AttrInt(shape_node, "end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::min(std::max<int64_t>(start, 0), rank);
    end = std::min(std::max<int64_t>(end, 0), rank);
    return {start, std::max(start, end)};
  }

  static std::optional<Tensor> FoldShape(const ir::Node& node, GraphEditor& editor) {
    const auto* dims = editor.DimsOf(node.inputs[0]);
    if (dims == nullptr) return std::nullopt;
    auto [start, end] = ShapeRange(node, static_cast<int64_t>(dims->size()));
    std::vector<int64_t> values;
    for (int64_t i = start; i < end; ++i) {
      if (!(*dims)[i].known()) return std::nullopt;
      values.push_back((*dims)[i].value);
    }
    return Tensor::FromVector<int64_t>(DataType::kInt64, {static_cast<int64_t>(values.size())}, values);
  }

  static std::optional<Tensor> FoldSize(const ir::Node& node, GraphEditor& editor) {
    auto shape = StaticShape(editor, node.inputs[0]);
    if (!shape) return std::nullopt;
    return Tensor::Scalar<int64_t>(DataType::kInt64, ShapeSize(*shape));
  }

  static std::optional<Tensor> FoldGatherOfShape(const ir::Node& node, GraphEditor& editor) {
    ir::Node* shape_node = editor.Producer(node.inputs[0]);
    if (!IsOp(shape_node, "Shape") || AttrInt(node, "axis", 0) != 0) return std::nullopt;
    const auto* dims = editor.DimsOf(shape_node->inputs[0]);
    const Tensor* idx = editor.Constant(node.inputs[1]);
    auto indices = ConstantInts(editor, node, 1);
    if (dims == nullptr || idx == nullptr || !indices || idx->rank() > 1) return std::nullopt;
    auto [start, end] = ShapeRange(*shape_node, static_cast<int64_t>(dims->size()));
    const int64_t len = end - start;
    std::vector<int64_t> values;
    for (int64_t i : *indices) {
      if (i < 0) i += len;
      if (i < 0 || i >= len || !(*dims)[start + i].known()) return std::nullopt;
      values.push_back((*dims)[start + i].value);
    }
    if (idx->rank() == 0) return Tensor::Scalar<int64_t>(DataType::kInt64, values[0]);
    return Tensor::FromVector<int64_t>(DataType::kInt64, {static_cast<int64_t>(values.size())}, values);
  }
};

ONYX_REGISTER_PASS(ShapeFolding, 90);

}  // namespace
}  // namespace onyx
