// Dynamically quantized MatMuls (onnxruntime.quantization.quantize_dynamic's form) become one
// com.microsoft op (extended), as ONNX Runtime's MatMulIntegerToFloatFusion and
// DynamicQuantizeMatMulFusion make them:
//   (q, s, z) = DynamicQuantizeLinear(x)
//   Y = Mul(Cast<float>(MatMulInteger(q, B, z [, b_zp])), Mul(s, b_scale)) [+ bias]
//   => DynamicQuantizeMatMul(x, B, b_scale, b_zp, bias)   when q, s and z have no other readers
//   => MatMulIntegerToFloat(q, B, s, b_scale, z, b_zp, bias)   otherwise
// b_scale (and b_zp) is constant, per tensor or per column of a constant 2-D B; the bias is a
// float constant of shape [N]. Every intermediate value must be read only inside the pattern.
// quantize_dynamic's ConvInteger + Cast + Mul (+ Add) is qdq_dynamic_conv_fusion.cc's (com.onyx).
#include "optimizer/fusion_util.h"
#include "optimizer/pass.h"
#include "optimizer/passes/qdq_selectors.h"
#include "optimizer/pattern_util.h"

namespace onyx {
namespace {

using namespace fusion;

class QdqDynamicMatMulFusion final : public Pass {
 public:
  std::string name() const override { return "QdqDynamicMatMulFusion"; }
  OptLevel level() const override { return OptLevel::kExtended; }
  std::vector<std::string> providers() const override { return {"CPU"}; }

  int Apply(PassContext& ctx) override {
    int rewrites = 0;
    for (ir::Node* mmi : ctx.editor.NodesOfType("MatMulInteger"))
      if (qdq::Live(ctx.editor, mmi)) rewrites += Fuse(ctx, mmi);
    return rewrites;
  }

 private:
  static int Fuse(PassContext& ctx, ir::Node* mmi) {
    GraphEditor& editor = ctx.editor;
    if (!IsOnnxOp(mmi, "MatMulInteger", 10) || mmi->inputs.size() < 3 || mmi->outputs.size() != 1) return 0;
    // A from DynamicQuantizeLinear, with its zero point.
    ir::Node* dql = editor.Producer(mmi->inputs[0]);
    if (!IsOnnxOp(dql, "DynamicQuantizeLinear", 11) || dql->outputs.size() != 3 || dql->outputs[0] != mmi->inputs[0] ||
        mmi->inputs[2] != dql->outputs[2])
      return 0;
    const std::string b_zp = mmi->inputs.size() > 3 ? mmi->inputs[3] : std::string();
    // B: a constant 2-D int8/uint8 matrix (its N gives the per-column scale's size).
    auto b = ConstValue(editor, mmi->inputs[1]);
    if (!b || b->rank() != 2 || (b->dtype() != DataType::kInt8 && b->dtype() != DataType::kUInt8)) return 0;
    const int64_t n = b->dim(1);
    // Cast to float, read only by the Mul.
    ir::Node* cast = SoleReader(editor, mmi->outputs[0]);
    if (!IsOnnxOp(cast, "Cast") || AttrInt(*cast, "to", 0) != static_cast<int64_t>(DataType::kFloat)) return 0;
    ir::Node* mul = SoleReader(editor, cast->outputs[0]);
    if (!IsOnnxOp(mul, "Mul", 7) || mul->inputs.size() != 2) return 0;
    // The Mul's other operand: Mul(s, b_scale) in either order.
    ir::Node* scale_mul = editor.Producer(OtherInput(*mul, cast->outputs[0]));
    if (OtherInput(*mul, cast->outputs[0]) == cast->outputs[0]) return 0;
    if (!IsOnnxOp(scale_mul, "Mul", 7) || scale_mul->inputs.size() != 2) return 0;
    const std::string& a_scale = dql->outputs[1];
    if (InputIndex(*scale_mul, a_scale) < 0) return 0;
    const std::string b_scale = OtherInput(*scale_mul, a_scale);
    if (b_scale.empty() || b_scale == a_scale) return 0;
    auto bs = ConstValue(editor, b_scale);
    if (!bs || bs->dtype() != DataType::kFloat || bs->rank() > 1 || (bs->size() != 1 && bs->size() != n)) return 0;
    if (!b_zp.empty()) {
      auto bz = ConstValue(editor, b_zp);
      if (!bz || bz->dtype() != b->dtype() || bz->size() != bs->size()) return 0;
    }
    // An optional bias Add of a float [N] constant.
    ir::Node* add = SoleReader(editor, mul->outputs[0]);
    std::string bias;
    if (IsOnnxOp(add, "Add", 7) && add->inputs.size() == 2 && OtherInput(*add, mul->outputs[0]) != mul->outputs[0]) {
      const std::string& other = OtherInput(*add, mul->outputs[0]);
      auto c = ConstValue(editor, other);
      if (c && c->dtype() == DataType::kFloat && c->rank() == 1 && c->dim(0) == n) bias = other;
    }
    const std::string out = bias.empty() ? mul->outputs[0] : add->outputs[0];

    std::vector<ir::Node*> pattern = {mmi, cast, mul};
    if (!bias.empty()) pattern.push_back(add);
    // The scale Mul goes when only the pattern reads it.
    const bool scale_mul_private = OnlyReadBy(editor, scale_mul->outputs[0], {mul});
    std::vector<ir::Node*> with_scale = pattern;
    if (scale_mul_private) with_scale.push_back(scale_mul);
    // DynamicQuantizeMatMul when the DynamicQuantizeLinear's outputs are read only here.
    const bool dql_private = OnlyReadBy(editor, dql->outputs[0], {mmi}) && OnlyReadBy(editor, dql->outputs[2], {mmi}) &&
                             scale_mul_private && OnlyReadBy(editor, dql->outputs[1], {scale_mul});
    if (dql_private && CanRun(ctx, "DynamicQuantizeMatMul", kMsDomain, 1)) {
      const std::vector<std::string> inputs = {dql->inputs[0], mmi->inputs[1], b_scale, b_zp, bias};
      with_scale.push_back(dql);
      RemoveAll(editor, with_scale);
      AddFusedNode(editor, "DynamicQuantizeMatMul", kMsDomain, 1, inputs, {out});
      ++ctx.counts["DynamicQuantizeMatMul"];
      return 1;
    }
    if (!CanRun(ctx, "MatMulIntegerToFloat", kMsDomain, 1)) return 0;
    const std::vector<std::string> inputs = {mmi->inputs[0], mmi->inputs[1], a_scale, b_scale,
                                             mmi->inputs[2], b_zp,           bias};
    RemoveAll(editor, with_scale);
    AddFusedNode(editor, "MatMulIntegerToFloat", kMsDomain, 1, inputs, {out});
    ++ctx.counts["MatMulIntegerToFloat"];
    return 1;
  }
};

ONYX_REGISTER_PASS(QdqDynamicMatMulFusion, 153);

}  // namespace
}  // namespace onyx
