// Conv followed by an inference BatchNormalization becomes one Conv with scaled weights and a
// new bias (extended): y = (conv(x, W) + B - mean) * scale / sqrt(var + eps) + beta.
#include <cmath>

#include "optimizer/fusion_util.h"
#include "optimizer/pass.h"
#include "optimizer/pattern_util.h"

namespace onyx {
namespace {

using namespace fusion;

class ConvBatchNormFusion final : public Pass {
 public:
  std::string name() const override { return "ConvBatchNormFusion"; }
  OptLevel level() const override { return OptLevel::kExtended; }

  int Apply(PassContext& ctx) override {
    GraphEditor& editor = ctx.editor;
    int rewrites = 0;
    for (ir::Node* bn : editor.NodesOfType("BatchNormalization")) {
      if (!IsOnnxOp(bn, "BatchNormalization", 7) || bn->inputs.size() != 5 || !OnlyFirstOutputUsed(editor, *bn))
        continue;
      if (AttrInt(*bn, "spatial", 1) != 1 || AttrInt(*bn, "training_mode", 0) != 0) continue;
      ir::Node* conv = editor.Producer(bn->inputs[0]);
      if (!IsOnnxOp(conv, "Conv") || SoleReader(editor, conv->outputs[0]) != bn) continue;
      auto p = ReadConvParams(editor, *conv);
      if (!p) continue;
      std::vector<std::vector<double>> stats;  // scale, beta, mean, var
      for (size_t i = 1; i < 5; ++i) {
        auto t = ConstValue(editor, bn->inputs[i]);
        if (!t || t->dtype() != p->w.dtype() || t->rank() != 1 || t->dim(0) != p->channels) break;
        stats.push_back(*ConstDoubles(editor, bn->inputs[i]));
      }
      if (stats.size() != 4) continue;
      const double eps = AttrFloat(*bn, "epsilon", 1e-5f);
      for (size_t m = 0; m < static_cast<size_t>(p->channels); ++m) {
        const double factor = stats[0][m] / std::sqrt(stats[3][m] + eps);
        p->scale[m] *= factor;
        p->bias[m] = (p->bias[m] - stats[2][m]) * factor + stats[1][m];
      }
      SetConvParams(editor, conv, *p, "bn_folded", true);
      const std::string out = bn->outputs[0];
      editor.RemoveNode(bn);
      editor.ReplaceAllUses(out, conv->outputs[0]);
      ++ctx.counts["Conv+BatchNormalization"];
      ++rewrites;
    }
    return rewrites;
  }
};

ONYX_REGISTER_PASS(ConvBatchNormFusion, 200);

}  // namespace
}  // namespace onyx
