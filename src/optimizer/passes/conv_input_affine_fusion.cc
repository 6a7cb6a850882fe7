// Conv without padding whose input is Add(Mul(x, s), t), s and t one-element constants, reads x
// instead: conv(s x + t) = conv'(x) with W' = s W and B' = B + t sum(W[m]) (extended).
// PP-OCRv4's learnable affine blocks put this scalar pair before every pointwise conv; each
// was two full passes over the activations. With padding the border sums would differ (padded
// zeros are not t), so only unpadded convs qualify.
#include "optimizer/fusion_util.h"
#include "optimizer/pass.h"
#include "optimizer/pattern_util.h"

namespace onyx {
namespace {

using namespace fusion;

// Whether the Conv adds no padding: explicit pads all zero, or auto_pad VALID.
bool Unpadded(const ir::Node& conv) {
  const std::string auto_pad = AttrString(conv, "auto_pad", "NOTSET");
  if (auto_pad == "VALID") return true;
  if (auto_pad != "NOTSET") return false;
  for (int64_t p : AttrInts(conv, "pads"))
    if (p != 0) return false;
  return true;
}

// The value of a one-element constant of type `dt` that broadcasts to no higher rank than `rank`.
std::optional<double> ScalarOperand(GraphEditor& editor, const std::string& value, DataType dt, int64_t rank) {
  auto t = ConstValue(editor, value);
  if (!t || t->dtype() != dt || t->size() != 1 || static_cast<int64_t>(t->rank()) > rank) return std::nullopt;
  return ConstScalar(editor, value);
}

class ConvInputAffineFusion final : public Pass {
 public:
  std::string name() const override { return "ConvInputAffineFusion"; }
  OptLevel level() const override { return OptLevel::kExtended; }

  int Apply(PassContext& ctx) override {
    GraphEditor& editor = ctx.editor;
    int rewrites = 0;
    for (ir::Node* conv : editor.NodesOfType("Conv")) {
      if (!IsOnnxOp(conv, "Conv") || conv->inputs.size() < 2 || !Unpadded(*conv)) continue;
      ir::Node* add = editor.Producer(conv->inputs[0]);
      if (!IsOnnxOp(add, "Add", 7) || add->inputs.size() != 2 || SoleReader(editor, add->outputs[0]) != conv)
        continue;
      auto p = ReadConvParams(editor, *conv);
      if (!p) continue;
      const DataType dt = p->w.dtype();
      const int64_t rank = static_cast<int64_t>(p->w.rank());
      for (int side = 0; side < 2; ++side) {
        ir::Node* mul = editor.Producer(add->inputs[side]);
        if (!IsOnnxOp(mul, "Mul", 7) || mul->inputs.size() != 2 || SoleReader(editor, mul->outputs[0]) != add) continue;
        auto shift = ScalarOperand(editor, add->inputs[1 - side], dt, rank);
        if (!shift) continue;
        int scale_side = -1;
        std::optional<double> scale;
        for (int ms = 0; ms < 2 && !scale; ++ms)
          if ((scale = ScalarOperand(editor, mul->inputs[ms], dt, rank))) scale_side = ms;
        if (!scale) continue;
        const std::string x = mul->inputs[1 - scale_side];
        if (x.empty()) continue;
        // B' = B + t sum(W[m]) with the original weights, then W' = s W.
        const std::vector<double> sums = p->WeightSums();
        for (size_t m = 0; m < static_cast<size_t>(p->channels); ++m) {
          p->bias[m] += *shift * sums[m];
          p->scale[m] *= *scale;
        }
        SetConvParams(editor, conv, *p, "affine_folded", true);
        editor.SetInput(conv, 0, x);
        editor.RemoveNode(add);
        editor.RemoveNode(mul);
        ++ctx.counts["Affine+Conv"];
        ++rewrites;
        break;
      }
    }
    return rewrites;
  }
};

ONYX_REGISTER_PASS(ConvInputAffineFusion, 207);

}  // namespace
}  // namespace onyx
