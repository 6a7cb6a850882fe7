// QLinearSiluFusion (extended, CPU): YOLO's int8 SiLU,
//   s = com.microsoft.QLinearSigmoid(x)  (read only by the Mul)
//   y = com.microsoft.QLinearMul(x, s)   (either order)
// => y = com.onyx.QLinearSiLU(x, x_scale, x_zp, s_scale, s_zp, y_scale, y_zp)
// when the Mul reads x and s with the Sigmoid's own parameters (equal constant scalars; the QDQ
// fusion and ONNX Runtime's quantizer both make them so). y depends on x's code alone, so the
// fused kernel is one 256-entry lookup (linalg::Q8SiluTable: the two ops' arithmetic per code,
// bit for bit), where the two ops read and wrote the image three times.
#include <unordered_set>

#include "optimizer/fusion_util.h"
#include "optimizer/pass.h"

namespace onyx {
namespace {

using namespace fusion;

const std::string& InputOr(const ir::Node* n, size_t i) {
  static const std::string kNone;
  return i < n->inputs.size() ? n->inputs[i] : kNone;
}

class QLinearSiluFusion final : public Pass {
 public:
  std::string name() const override { return "QLinearSiluFusion"; }
  OptLevel level() const override { return OptLevel::kExtended; }
  std::vector<std::string> providers() const override { return {"CPU"}; }

  int Apply(PassContext& ctx) override {
    if (!CanRun(ctx, "QLinearSiLU", kOnyxDomain, 1)) return 0;
    GraphEditor& editor = ctx.editor;
    int rewrites = 0;
    std::unordered_set<const ir::Node*> removed;  // Sigmoids fused earlier in this sweep
    for (ir::Node* mul : editor.Nodes()) {
      if (removed.count(mul)) continue;
      if (mul->domain != kMsDomain || mul->op_type != "QLinearMul" || mul->outputs.size() != 1 ||
          mul->inputs.size() != 8)
        continue;
      for (size_t side : {0, 3}) {  // x at input `side`, the Sigmoid's output at the other
        const std::string& x = mul->inputs[side];
        const std::string& s = mul->inputs[3 - side];
        ir::Node* sig = editor.Producer(s);
        if (sig == nullptr || sig->domain != kMsDomain || sig->op_type != "QLinearSigmoid" || sig->outputs.size() != 1 ||
            sig->inputs.size() < 4 || sig->inputs.size() > 5 || sig->inputs[0] != x || SoleReader(editor, s) != mul)
          continue;
        // The Mul's parameters of x and s are the Sigmoid's input and output parameters.
        if (!SameConstScalar(editor, mul->inputs[side + 1], sig->inputs[1]) ||
            !SameConstScalar(editor, mul->inputs[side + 2], InputOr(sig, 2)) ||
            !SameConstScalar(editor, mul->inputs[4 - side], sig->inputs[3]) ||
            !SameConstScalar(editor, mul->inputs[5 - side], InputOr(sig, 4)))
          continue;
        const std::vector<std::string> inputs = {x, sig->inputs[1], InputOr(sig, 2), sig->inputs[3], InputOr(sig, 4),
                                                 mul->inputs[6], mul->inputs[7]};
        const std::string y = mul->outputs[0];
        removed.insert(sig);
        RemoveAll(editor, {sig, mul});
        AddFusedNode(editor, "QLinearSiLU", kOnyxDomain, 1, inputs, {y});
        ++rewrites;
        break;
      }
    }
    return rewrites;
  }
};

// After the QDQ fusions (QdqOpFusion makes QLinearSigmoid / QLinearMul), before the layouts.
ONYX_REGISTER_PASS(QLinearSiluFusion, 160);

}  // namespace
}  // namespace onyx
