// QLinearConvAddFusion (all, CPU, after QdqNhwcLayout): a channels-last conv and the residual add
// that reads it,
//   y = com.microsoft.QLinearConv(x, ...) channels_last = 1  (y read only by the add, once)
//   c = com.microsoft.QLinearAdd(y, y_scale, y_zp, r, r_scale, r_zp, c_scale, c_zp)  (or r first)
// => c = com.onyx.QLinearConvAdd(x, ..., y_scale, y_zp, B, r, r_scale, r_zp, c_scale, c_zp),
//    conv_input = the add's input y was (0: A, 1: B)
// when the add reads y with the conv's own output parameters (equal constant scalars) and r, y
// and c have the same known dims (no broadcast) and r y's type. The direct kernel sums each
// requantized code with r's code in registers with QLinearAdd's arithmetic, so y is never written
// and read back (ResNet-50: 16 residual blocks; MobileNetV2: 10).
#include "optimizer/fusion_util.h"
#include "optimizer/pass.h"

namespace onyx {
namespace {

using namespace fusion;

class QLinearConvAddFusion final : public Pass {
 public:
  std::string name() const override { return "QLinearConvAddFusion"; }
  OptLevel level() const override { return OptLevel::kAll; }
  std::vector<std::string> providers() const override { return {"CPU"}; }

  int Apply(PassContext& ctx) override {
    if (!CanRun(ctx, "QLinearConvAdd", kOnyxDomain, 1)) return 0;
    GraphEditor& editor = ctx.editor;
    int rewrites = 0;
    for (ir::Node* add : editor.Nodes()) {
      if (add->domain != kMsDomain || add->op_type != "QLinearAdd" || add->outputs.size() != 1 ||
          add->inputs.size() < 7 || add->inputs.size() > 8)
        continue;
      for (int k = 0; k < 2; ++k) {  // the conv as the add's A, else as its B
        ir::Node* conv = FusableConv(editor, *add, k);
        if (conv == nullptr) continue;
        const size_t other = k == 0 ? 3 : 0;
        std::vector<std::string> inputs = conv->inputs;
        inputs.resize(9);  // B may be absent: ""
        for (size_t i : {other, other + 1, other + 2, size_t{6}}) inputs.push_back(add->inputs[i]);
        if (add->inputs.size() == 8) inputs.push_back(add->inputs[7]);
        const std::string c = add->outputs[0];
        const ir::Node saved = *conv;
        RemoveAll(editor, {conv, add});
        ir::Node* fused = AddFusedNode(editor, "QLinearConvAdd", kOnyxDomain, 1, inputs, {c});
        for (const auto& a : saved.attributes) fused->attributes.push_back(a.Clone());
        fused->attributes.push_back(IntAttr("conv_input", k));
        ++rewrites;
        break;
      }
    }
    return rewrites;
  }

 private:
  // The channels-last conv making the add's input k (0: A, 1: B) that may be fused into it, or null.
  static ir::Node* FusableConv(GraphEditor& editor, const ir::Node& add, int k) {
    const size_t at = k == 0 ? 0 : 3, other = k == 0 ? 3 : 0;
    const std::string& y = add.inputs[at];
    if (y.empty() || add.inputs[other] == y) return nullptr;  // add(y, y): y is read twice
    ir::Node* conv = editor.Producer(y);
    if (conv == nullptr || conv->domain != kMsDomain || conv->op_type != "QLinearConv" || conv->outputs.size() != 1 ||
        conv->inputs.size() < 8 || conv->inputs.size() > 9 || SoleReader(editor, y) != &add)
      return nullptr;
    const ir::Attribute* cl = conv->FindAttribute("channels_last");
    if (cl == nullptr || cl->i == 0) return nullptr;
    // The add reads y with the conv's own output parameters (the fused op takes them once).
    if (add.inputs[at + 2].empty() || !SameConstScalar(editor, add.inputs[at + 1], conv->inputs[6]) ||
        !SameConstScalar(editor, add.inputs[at + 2], conv->inputs[7]))
      return nullptr;
    // Per element, no broadcast: r and c have y's dims (known, rank 4) and r y's type.
    const DataType t = ElemType(editor, y);
    if (!TypeIn(t, {DataType::kUInt8, DataType::kInt8}) || ElemType(editor, add.inputs[other]) != t) return nullptr;
    const auto* dy = editor.DimsOf(y);
    const auto* dr = editor.DimsOf(add.inputs[other]);
    const auto* dc = editor.DimsOf(add.outputs[0]);
    if (dy == nullptr || dr == nullptr || dc == nullptr || dy->size() != 4 || !SameDims(*dy, *dr) ||
        !SameDims(*dy, *dc))
      return nullptr;
    return conv;
  }
};

// After QdqNhwcLayout (905), which makes the channels-last convs, and QLinearConvSiluFusion (906).
ONYX_REGISTER_PASS(QLinearConvAddFusion, 907);

}  // namespace
}  // namespace onyx
