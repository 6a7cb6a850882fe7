// QLinearConvSiluFusion (all, CPU, after QdqNhwcLayout): a channels-last conv and its SiLU,
//   y = com.microsoft.QLinearConv(x, ...) channels_last = 1  (y read only by the SiLU)
//   z = com.onyx.QLinearSiLU(y, y_scale, y_zp, s_scale, s_zp, z_scale, z_zp)
// => z = com.onyx.QLinearConvSiLU(x, ..., y_scale, y_zp, B, s_scale, s_zp, z_scale, z_zp)
// when the SiLU reads y with the conv's own output parameters (equal constant scalars). The
// direct kernel looks each requantized code up in the SiLU's table before storing it, so the
// image is written once instead of written, read and written again (YOLO: 57 convs).
#include <unordered_set>

#include "optimizer/fusion_util.h"
#include "optimizer/pass.h"

namespace onyx {
namespace {

using namespace fusion;

class QLinearConvSiluFusion final : public Pass {
 public:
  std::string name() const override { return "QLinearConvSiluFusion"; }
  OptLevel level() const override { return OptLevel::kAll; }
  std::vector<std::string> providers() const override { return {"CPU"}; }

  int Apply(PassContext& ctx) override {
    if (!CanRun(ctx, "QLinearConvSiLU", kOnyxDomain, 1)) return 0;
    GraphEditor& editor = ctx.editor;
    int rewrites = 0;
    std::unordered_set<const ir::Node*> removed;  // SiLUs fused earlier in this sweep
    for (ir::Node* conv : editor.Nodes()) {
      if (removed.count(conv)) continue;
      if (conv->domain != kMsDomain || conv->op_type != "QLinearConv" || conv->outputs.size() != 1 ||
          conv->inputs.size() < 8 || conv->inputs.size() > 9)
        continue;
      const ir::Attribute* cl = conv->FindAttribute("channels_last");
      if (cl == nullptr || cl->i == 0) continue;
      ir::Node* silu = SoleReader(editor, conv->outputs[0]);
      if (silu == nullptr || silu->domain != kOnyxDomain || silu->op_type != "QLinearSiLU" ||
          silu->outputs.size() != 1 || silu->inputs.size() != 7 || silu->inputs[0] != conv->outputs[0] ||
          silu->inputs[4].empty() || silu->inputs[6].empty() ||  // the fused op takes every zero point
          !SameConstScalar(editor, silu->inputs[1], conv->inputs[6]) ||
          !SameConstScalar(editor, silu->inputs[2], conv->inputs[7]))
        continue;
      std::vector<std::string> inputs = conv->inputs;
      inputs.resize(9);  // B may be absent: ""
      inputs.insert(inputs.end(), silu->inputs.begin() + 3, silu->inputs.end());
      const std::string z = silu->outputs[0];
      const ir::Node saved = *conv;
      removed.insert(silu);
      RemoveAll(editor, {conv, silu});
      ir::Node* fused = AddFusedNode(editor, "QLinearConvSiLU", kOnyxDomain, 1, inputs, {z});
      for (const auto& a : saved.attributes) fused->attributes.push_back(a.Clone());
      ++rewrites;
    }
    return rewrites;
  }
};

// After QdqNhwcLayout (905), which makes the channels-last convs.
ONYX_REGISTER_PASS(QLinearConvSiluFusion, 906);

}  // namespace
}  // namespace onyx
