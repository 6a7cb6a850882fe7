// Conv followed by Mul with a per-output-channel constant (a scalar, [M,1,1], [1,M,1,1]) folds
// the factor into the Conv's weights and bias (extended).
#include "optimizer/fusion_util.h"
#include "optimizer/pass.h"

namespace onyx {
namespace {

using namespace fusion;

class ConvMulFusion final : public Pass {
 public:
  std::string name() const override { return "ConvMulFusion"; }
  OptLevel level() const override { return OptLevel::kExtended; }

  int Apply(PassContext& ctx) override {
    GraphEditor& editor = ctx.editor;
    int rewrites = 0;
    for (ir::Node* mul : editor.NodesOfType("Mul")) {
      if (!IsOnnxOp(mul, "Mul", 7) || mul->inputs.size() != 2) continue;
      for (int side = 0; side < 2; ++side) {
        ir::Node* conv = editor.Producer(mul->inputs[side]);
        if (!IsOnnxOp(conv, "Conv") || SoleReader(editor, conv->outputs[0]) != mul) continue;
        auto p = ReadConvParams(editor, *conv);
        if (!p) continue;
        const std::string& factor_name = mul->inputs[1 - side];
        auto factor = ConstValue(editor, factor_name);
        if (!factor || factor->dtype() != p->w.dtype()) continue;
        auto factors = PerChannelValues(editor, factor_name, static_cast<int64_t>(p->w.rank()), p->channels);
        if (!factors) continue;
        for (size_t m = 0; m < static_cast<size_t>(p->channels); ++m) {
          p->scale[m] *= (*factors)[m];
          p->bias[m] *= (*factors)[m];
        }
        SetConvParams(editor, conv, *p, "mul_folded", true);
        const std::string out = mul->outputs[0];
        editor.RemoveNode(mul);
        editor.ReplaceAllUses(out, conv->outputs[0]);
        ++ctx.counts["Conv+Mul"];
        ++rewrites;
        break;
      }
    }
    return rewrites;
  }
};

ONYX_REGISTER_PASS(ConvMulFusion, 205);

}  // namespace
}  // namespace onyx
