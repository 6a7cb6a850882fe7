// RMS normalization over the last k axes, x / sqrt(ReduceMean(x^2) + eps) [* scale], becomes
// SimplifiedLayerNormalization (extended). ONNX Runtime registers that op in the default
// domain (it rejects com.microsoft.SimplifiedLayerNormalization), so the fused node is written
// there; x^2 may be Pow(x, 2) or x*x, the division Div or Mul by Reciprocal.
#include "optimizer/fusion_util.h"
#include "optimizer/pass.h"
#include "optimizer/passes/layer_norm_pattern.h"
#include "optimizer/pattern_util.h"

namespace onyx {
namespace {

using namespace fusion;

class SimplifiedLayerNormFusion final : public Pass {
 public:
  std::string name() const override { return "SimplifiedLayerNormFusion"; }
  OptLevel level() const override { return OptLevel::kExtended; }
  std::vector<std::string> providers() const override { return {"CPU"}; }

  int Apply(PassContext& ctx) override {
    GraphEditor& editor = ctx.editor;
    int rewrites = 0;
    for (ir::Node* var : editor.NodesOfType("ReduceMean")) {
      auto k = TrailingReduceCount(editor, *var);
      if (!k || !CanRun(ctx, "SimplifiedLayerNormalization", "", var->opset)) continue;
      ir::Node* square = editor.Producer(var->inputs[0]);
      if (square == nullptr || SoleReader(editor, square->outputs[0]) != var || square->inputs.size() != 2) continue;
      const std::string x = square->inputs[0];
      const bool is_square = (IsOnnxOp(square, "Pow", 7) && IsConstNear(editor, square->inputs[1], 2.0, 0) &&
                              RankOf(editor, square->inputs[1]) <= RankOf(editor, x)) ||
                             (IsOnnxOp(square, "Mul", 7) && square->inputs[1] == x);
      if (!is_square) continue;
      const DataType dt = ElemType(editor, x);
      if (!TypeIn(dt, {DataType::kFloat, DataType::kFloat16, DataType::kDouble})) continue;
      const auto& dims = *editor.DimsOf(x);
      const std::vector<Dim> norm_dims(dims.end() - *k, dims.end());
      auto norm = MatchNormalize(editor, var->outputs[0], x);
      if (!norm) continue;
      AffineMatch affine = MatchAffine(editor, norm->normalized, norm_dims, dt);
      if (!affine.bias.empty()) {  // RMS normalization has no bias term: the Add stays
        affine.nodes.pop_back();
        affine.output = affine.nodes.empty() ? norm->normalized : affine.nodes.back()->outputs[0];
      }
      std::string scale = affine.scale;
      if (scale.empty()) {
        auto ones = FilledOperand(editor, norm_dims, dt, 1.0, var->name + "_rms_scale");
        if (!ones) continue;
        scale = *ones;
      }
      std::vector<ir::Node*> nodes = {square, var};
      nodes.insert(nodes.end(), norm->nodes.begin(), norm->nodes.end());
      nodes.insert(nodes.end(), affine.nodes.begin(), affine.nodes.end());
      const int opset = var->opset;
      RemoveAll(editor, nodes);
      ir::Node* n = AddFusedNode(editor, "SimplifiedLayerNormalization", "", opset, {x, scale}, {affine.output});
      n->attributes = {IntAttr("axis", -*k), FloatAttr("epsilon", static_cast<float>(norm->epsilon)),
                       IntAttr("stash_type", 1)};
      ++ctx.counts["SimplifiedLayerNormalization"];
      ++rewrites;
    }
    return rewrites;
  }
};

ONYX_REGISTER_PASS(SimplifiedLayerNormFusion, 330);

}  // namespace
}  // namespace onyx
