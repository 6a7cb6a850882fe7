// Conv followed by Add of a per-output-channel constant (a scalar, [M,1,1], [1,M,1,1]) folds
// the constant into the Conv's bias (extended).
#include "optimizer/fusion_util.h"
#include "optimizer/pass.h"

namespace onyx {
namespace {

using namespace fusion;

class ConvAddFusion final : public Pass {
 public:
  std::string name() const override { return "ConvAddFusion"; }
  OptLevel level() const override { return OptLevel::kExtended; }

  int Apply(PassContext& ctx) override {
    GraphEditor& editor = ctx.editor;
    int rewrites = 0;
    for (ir::Node* add : editor.NodesOfType("Add")) {
      if (!IsOnnxOp(add, "Add", 7) || add->inputs.size() != 2) continue;
      for (int side = 0; side < 2; ++side) {
        ir::Node* conv = editor.Producer(add->inputs[side]);
        if (!IsOnnxOp(conv, "Conv") || SoleReader(editor, conv->outputs[0]) != add) continue;
        auto p = ReadConvParams(editor, *conv);
        if (!p) continue;
        const std::string& addend_name = add->inputs[1 - side];
        auto addend = ConstValue(editor, addend_name);
        if (!addend || addend->dtype() != p->w.dtype()) continue;
        auto addends = PerChannelValues(editor, addend_name, static_cast<int64_t>(p->w.rank()), p->channels);
        if (!addends) continue;
        for (size_t m = 0; m < static_cast<size_t>(p->channels); ++m) p->bias[m] += (*addends)[m];
        SetConvParams(editor, conv, *p, "add_folded", false);
        const std::string out = add->outputs[0];
        editor.RemoveNode(add);
        editor.ReplaceAllUses(out, conv->outputs[0]);
        ++ctx.counts["Conv+Add"];
        ++rewrites;
        break;
      }
    }
    return rewrites;
  }
};

ONYX_REGISTER_PASS(ConvAddFusion, 206);

}  // namespace
}  // namespace onyx
