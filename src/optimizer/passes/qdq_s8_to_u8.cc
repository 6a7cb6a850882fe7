// Where int8 activations do not fuse into QLinearConv / QLinearMatMul (x86-64: see
// qdq::kInt8ActivationsAllowed), int8 QuantizeLinear -> DequantizeLinear pairs of activations
// become uint8 pairs with the zero point moved by 128 (extended, before the QDQ fusions), as ONNX
// Runtime's QDQS8ToU8Transformer does; the values the pair carries are the same.
// Conditions (ORT's): the Q's output is read only by one DQ (and is no graph output), that DQ
// is read at most once (ORT first gives every reader of a shared DQ its own copy, which leaves
// the Q with several DQs), both have a constant one-element int8 zero point of equal value.
// Weights (lone DQs of int8 constants) stay int8.
#include "optimizer/fusion_util.h"
#include "optimizer/pass.h"
#include "optimizer/passes/qdq_selectors.h"
#include "optimizer/pattern_util.h"

namespace onyx {
namespace {

using namespace fusion;

// A constant one-element int8 zero point (an initializer, as ORT requires).
std::optional<int8_t> Int8ZeroPoint(GraphEditor& editor, const ir::Node& node) {
  if (node.inputs.size() != 3 || node.inputs[2].empty()) return std::nullopt;
  const Tensor* zp = editor.Constant(node.inputs[2]);
  if (zp == nullptr || zp->dtype() != DataType::kInt8 || zp->size() != 1) return std::nullopt;
  return zp->data<int8_t>()[0];
}

class QdqS8ToU8 final : public Pass {
 public:
  std::string name() const override { return "QdqS8ToU8"; }
  OptLevel level() const override { return OptLevel::kExtended; }
  std::vector<std::string> providers() const override { return {"CPU"}; }

  int Apply(PassContext& ctx) override {
    if (qdq::kInt8ActivationsAllowed) return 0;
    if (!qdq::HasQdqNodes(ctx.editor)) return 0;
    GraphEditor& editor = ctx.editor;
    int rewrites = 0;
    for (ir::Node* q : editor.NodesOfType("QuantizeLinear")) {
      if (!IsOnnxOp(q, "QuantizeLinear", 10) || !qdq::Live(editor, q) || q->outputs.size() != 1) continue;
      ir::Node* dq = SoleReader(editor, q->outputs[0]);
      if (!IsOnnxOp(dq, "DequantizeLinear", 10) || dq->inputs.empty() || dq->inputs[0] != q->outputs[0]) continue;
      if (dq->outputs.size() != 1 || editor.UseCount(dq->outputs[0]) > 1) continue;
      if (AttrInt(*q, "output_dtype", 0) != 0) continue;
      auto q_zp = Int8ZeroPoint(editor, *q), dq_zp = Int8ZeroPoint(editor, *dq);
      if (!q_zp || !dq_zp || *q_zp != *dq_zp) continue;
      const auto u8 = static_cast<uint8_t>(static_cast<int>(*q_zp) + 128);
      const std::string zp = editor.AddInitializer(q->inputs[2] + "_u8", Tensor::Scalar<uint8_t>(DataType::kUInt8, u8));
      const std::string value = editor.UniqueName(q->outputs[0] + "_u8");
      const ir::Node original = *q;
      editor.RemoveNode(q);
      ir::Node* q8 = AddFusedNode(editor, "QuantizeLinear", "", original.opset,
                                  {original.inputs[0], original.inputs[1], zp}, {value});
      for (const auto& a : original.attributes) q8->attributes.push_back(a.Clone());
      editor.SetInput(dq, 0, value);
      editor.SetInput(dq, 2, zp);
      ++ctx.counts["int8 Q/DQ pair to uint8"];
      ++rewrites;
    }
    return rewrites;
  }
};

ONYX_REGISTER_PASS(QdqS8ToU8, 149);

}  // namespace
}  // namespace onyx
