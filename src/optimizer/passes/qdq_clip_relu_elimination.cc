// A Relu or Clip whose only reader is a QuantizeLinear that clamps at least as much goes
// (extended, before the QDQ fusions), as ONNX Runtime's ReluQuantTransformer and ClipQuantFusion
// remove it: the group DQ -> op -> Relu -> Q then fuses as DQ -> op -> Q.
//   Relu -> Q: the Q's zero point is the lowest code (0 for uint8, -128 for int8), so every
//   negative value saturates to the code of 0 anyway;
//   Clip(min, max) -> Q: [min, max] covers the Q's range [scale (qmin - zp), scale (qmax - zp)]
//   (within float epsilon, as ORT), constant min / max, scalar constant float scale.
// The Relu / Clip output must be read only by the Q (no graph output); the zero point a constant
// one-element uint8 / int8 initializer (ORT also removes a Relu before an int16 Q of any zero
// point; Onyx keeps that one).
#include <cfloat>
#include <limits>

#include "optimizer/fusion_util.h"
#include "optimizer/pass.h"
#include "optimizer/passes/qdq_selectors.h"
#include "optimizer/pattern_util.h"

namespace onyx {
namespace {

using namespace fusion;

// The Q's zero point as an integer with its type's lowest and highest codes.
struct QRange {
  int zero_point = 0, lowest = 0, highest = 0;
};

std::optional<QRange> ZeroPointRange(GraphEditor& editor, const ir::Node& q) {
  if (q.inputs.size() != 3 || q.inputs[2].empty()) return std::nullopt;
  const Tensor* zp = editor.Constant(q.inputs[2]);
  if (zp == nullptr || zp->size() != 1) return std::nullopt;
  if (zp->dtype() == DataType::kUInt8) return QRange{zp->data<uint8_t>()[0], 0, 255};
  if (zp->dtype() == DataType::kInt8) return QRange{zp->data<int8_t>()[0], -128, 127};
  return std::nullopt;
}

// A Clip's constant bounds (attributes before opset 11, optional constant inputs since).
bool ClipBounds(GraphEditor& editor, const ir::Node& clip, float* lo, float* hi) {
  *lo = -FLT_MAX;
  *hi = FLT_MAX;
  if (clip.opset < 11) {
    *lo = AttrFloat(clip, "min", -FLT_MAX);
    *hi = AttrFloat(clip, "max", FLT_MAX);
    return true;
  }
  for (size_t i = 1; i < clip.inputs.size() && i < 3; ++i) {
    if (clip.inputs[i].empty()) continue;
    const Tensor* t = editor.Constant(clip.inputs[i]);
    if (t == nullptr || t->dtype() != DataType::kFloat || t->size() != 1) return false;
    (i == 1 ? *lo : *hi) = t->data<float>()[0];
  }
  return true;
}

class QdqClipReluElimination final : public Pass {
 public:
  std::string name() const override { return "QdqClipReluElimination"; }
  OptLevel level() const override { return OptLevel::kExtended; }
  std::vector<std::string> providers() const override { return {"CPU"}; }

  int Apply(PassContext& ctx) override {
    if (!qdq::HasQdqNodes(ctx.editor)) return 0;
    GraphEditor& editor = ctx.editor;
    int rewrites = 0;
    for (ir::Node* node : editor.Nodes()) {
      const bool relu = IsOnnxOp(node, "Relu"), clip = IsOnnxOp(node, "Clip");
      if ((!relu && !clip) || !qdq::Live(editor, node) || node->inputs.empty() || node->outputs.size() != 1) continue;
      ir::Node* q = SoleReader(editor, node->outputs[0]);
      if (!IsOnnxOp(q, "QuantizeLinear", 10) || q->inputs.empty() || q->inputs[0] != node->outputs[0]) continue;
      auto range = ZeroPointRange(editor, *q);
      if (!range) continue;
      if (relu) {
        if (range->zero_point != range->lowest) continue;
      } else {
        const Tensor* scale = editor.Constant(q->inputs[1]);
        if (scale == nullptr || scale->dtype() != DataType::kFloat || scale->rank() != 0) continue;
        float lo = 0, hi = 0;
        if (!ClipBounds(editor, *node, &lo, &hi)) continue;
        const float s = scale->data<float>()[0];
        const float lower = s * static_cast<float>(range->lowest - range->zero_point);
        const float upper = s * static_cast<float>(range->highest - range->zero_point);
        constexpr float kEpsilon = std::numeric_limits<float>::epsilon();
        if (kEpsilon < lo - lower || kEpsilon < upper - hi) continue;
      }
      const std::string source = node->inputs[0];
      editor.RemoveNode(node);
      editor.SetInput(q, 0, source);
      ++ctx.counts[relu ? "removed Relu before QuantizeLinear" : "removed Clip before QuantizeLinear"];
      ++rewrites;
    }
    return rewrites;
  }
};

ONYX_REGISTER_PASS(QdqClipReluElimination, 148);

}  // namespace
}  // namespace onyx
