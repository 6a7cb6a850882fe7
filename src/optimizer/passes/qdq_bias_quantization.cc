// A float bias of a Conv / ConvTranspose / Gemm between DQs and a Q becomes the DQ of an int32
// bias (extended, first of the QDQ passes), as ONNX Runtime's WeightBiasQuantization does at
// level basic, so that the group fuses (QLinearConv and QGemm take an int32 bias) and a group
// that stays float computes with the same rounded bias as ORT:
//   bias_scale[m] = x_scale * w_scale[m]   (float)
//   bias_q[m] = int32(round_half_even(bias[m] / bias_scale[m]))   (float division)
//   bias -> DequantizeLinear(bias_q, bias_scale [, axis 0 when per channel])
// Conditions (ORT's): x comes from a DQ with a one-element scale; w from a DQ, per tensor or per
// channel with as many scales as the bias on the output-channel axis (Conv 0, Gemm 1, or 0 with
// transB); the bias a 1-D constant; the op's result reaches a QuantizeLinear through nothing but
// Relu / Clip, each read only once. Onyx also needs the scales constant (it computes the bias
// once here, where ORT adds Mul / Div / Round / Cast nodes that constant folding removes) and
// leaves biases whose quantized value overflows int32. ORT's other half of the pass, quantizing a
// float weight initializer to int8, is not done: such groups stay float.
#include <cmath>

#include "optimizer/fusion_util.h"
#include "optimizer/pass.h"
#include "optimizer/passes/qdq_selectors.h"
#include "optimizer/pattern_util.h"

namespace onyx {
namespace {

using namespace fusion;

// ORT's IsNoBranchPathToQuantizeLinear: single readers through Relu / Clip up to a Q.
bool ReachesQuantizeWithoutBranching(GraphEditor& editor, const ir::Node& node) {
  const ir::Node* current = &node;
  for (int hops = 0; hops < 8; ++hops) {
    if (current->outputs.size() != 1) return false;
    const ir::Node* reader = SoleReader(editor, current->outputs[0]);
    if (reader == nullptr) return false;
    if (IsOnnxOp(reader, "QuantizeLinear", 10)) return true;
    if (!IsOnnxOp(reader, "Relu") && !IsOnnxOp(reader, "Clip")) return false;
    current = reader;
  }
  return false;
}

class QdqBiasQuantization final : public Pass {
 public:
  std::string name() const override { return "QdqBiasQuantization"; }
  OptLevel level() const override { return OptLevel::kExtended; }
  std::vector<std::string> providers() const override { return {"CPU"}; }

  int Apply(PassContext& ctx) override {
    int rewrites = 0;
    for (ir::Node* node : ctx.editor.Nodes())
      if (IsOnnxOp(node, "Conv") || IsOnnxOp(node, "ConvTranspose") || IsOnnxOp(node, "Gemm"))
        rewrites += Quantize(ctx, node);
    return rewrites;
  }

 private:
  static int Quantize(PassContext& ctx, ir::Node* node) {
    GraphEditor& editor = ctx.editor;
    if (node->inputs.size() != 3 || node->inputs[2].empty() || node->outputs.size() != 1) return 0;
    const ir::Node* dq_x = editor.Producer(node->inputs[0]);
    const ir::Node* dq_w = editor.Producer(node->inputs[1]);
    if (!IsOnnxOp(dq_x, "DequantizeLinear", 10) || !IsOnnxOp(dq_w, "DequantizeLinear", 10)) return 0;
    if (dq_x->inputs.size() < 2 || dq_w->inputs.size() < 2 || AttrInt(*dq_w, "block_size", 0) != 0) return 0;
    auto xs = ConstValue(editor, dq_x->inputs[1]);
    auto ws = ConstValue(editor, dq_w->inputs[1]);
    if (!xs || !ws || xs->dtype() != DataType::kFloat || ws->dtype() != DataType::kFloat || xs->size() != 1) return 0;
    // A 1-D float constant bias (already a DQ: nothing to do).
    const Tensor* bias = editor.Constant(node->inputs[2]);
    if (bias == nullptr || bias->dtype() != DataType::kFloat || bias->rank() != 1) return 0;
    const int64_t size = bias->dim(0);
    const bool per_tensor = ws->size() == 1 && ws->rank() <= 1;  // ORT's IsScalar
    if (!per_tensor) {
      // Per channel: as many scales as the bias, on the output-channel axis.
      if (ws->rank() != 1 || ws->size() != size) return 0;
      int64_t axis = AttrInt(*dq_w, "axis", 1);
      if (axis < 0) {
        const auto* w_dims = editor.DimsOf(dq_w->inputs[0]);
        if (w_dims == nullptr) return 0;
        axis += static_cast<int64_t>(w_dims->size());
      }
      const int64_t expected = node->op_type == "Gemm" ? (AttrInt(*node, "transB", 0) == 0 ? 1 : 0) : 0;
      if (axis != expected) return 0;
    }
    if (!ReachesQuantizeWithoutBranching(editor, *node)) return 0;

    const float x_scale = xs->data<float>()[0];
    Tensor scale(DataType::kFloat, per_tensor ? Shape{} : Shape{size});
    Tensor q(DataType::kInt32, {size});
    for (int64_t m = 0; m < size; ++m) {
      const float s = x_scale * ws->data<float>()[per_tensor ? 0 : m];
      scale.data<float>()[per_tensor ? 0 : m] = s;
      const float v = std::nearbyint(bias->data<float>()[m] / s);
      if (!(std::abs(v) < 2147483648.0f)) return 0;  // NaN, infinite or beyond int32
      q.data<int32_t>()[m] = static_cast<int32_t>(v);
    }
    const std::string q_name = editor.AddInitializer(node->name + "_bias_int32", std::move(q));
    const std::string s_name = editor.AddInitializer(node->name + "_bias_scale", std::move(scale));
    const std::string out = editor.UniqueName(node->inputs[2] + "_dq");
    ir::Node* dq = AddFusedNode(editor, "DequantizeLinear", "", dq_w->opset, {q_name, s_name}, {out});
    if (!per_tensor) dq->attributes.push_back(IntAttr("axis", 0));
    editor.SetInput(node, 2, out);
    ++ctx.counts["quantized bias"];
    return 1;
  }
};

ONYX_REGISTER_PASS(QdqBiasQuantization, 147);

}  // namespace
}  // namespace onyx
