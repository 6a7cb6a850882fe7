// Add(x, bias) feeding a GELU becomes one node (extended), as ONNX Runtime does: Gelu (either
// domain's exact GELU) becomes com.microsoft.BiasGelu(x, bias), and a FastGelu without bias
// takes the bias as its second input. The bias must be 1-D with x's last dim, so the Add does
// not broadcast x.
#include "optimizer/fusion_util.h"
#include "optimizer/pass.h"
#include "optimizer/pattern_util.h"

namespace onyx {
namespace {

using namespace fusion;

class BiasGeluFusion final : public Pass {
 public:
  std::string name() const override { return "BiasGeluFusion"; }
  OptLevel level() const override { return OptLevel::kExtended; }
  std::vector<std::string> providers() const override { return {"CPU"}; }

  int Apply(PassContext& ctx) override {
    GraphEditor& editor = ctx.editor;
    int rewrites = 0;
    // Each rewrite replaces nodes by one computing the same output: the types stand.
    const auto frozen = editor.FreezeTypes();
    std::vector<ir::Node*> anchors = editor.NodesOfType("Gelu", kMsDomain);
    for (ir::Node* n : editor.NodesOfType("Gelu"))
      if (n->opset >= 20 && AttrString(*n, "approximate", "none") == "none") anchors.push_back(n);
    for (ir::Node* n : editor.NodesOfType("FastGelu", kMsDomain)) anchors.push_back(n);
    for (ir::Node* gelu : anchors) {
      if (gelu->inputs.size() != 1 || gelu->outputs.size() != 1) continue;
      ir::Node* add = editor.Producer(gelu->inputs[0]);
      if (!IsOnnxOp(add, "Add", 7) || add->inputs.size() != 2 || SoleReader(editor, add->outputs[0]) != gelu) continue;
      const DataType dt = ElemType(editor, add->outputs[0]);
      if (!TypeIn(dt, {DataType::kFloat, DataType::kFloat16})) continue;
      for (int side = 0; side < 2; ++side) {
        const std::string& x = add->inputs[1 - side];
        const std::string& bias = add->inputs[side];
        const auto x_last = LastDim(editor, x);
        const auto* bd = editor.DimsOf(bias);
        if (!x_last || bd == nullptr || bd->size() != 1 || !SameDim(*x_last, (*bd)[0])) continue;
        if (ElemType(editor, x) != dt || ElemType(editor, bias) != dt) continue;
        const bool fast = gelu->op_type == "FastGelu";
        if (!CanRun(ctx, fast ? "FastGelu" : "BiasGelu", kMsDomain, 1)) break;
        const std::vector<std::string> inputs = {x, bias};
        const std::string out = gelu->outputs[0];
        RemoveAll(editor, {add, gelu});
        AddFusedNode(editor, fast ? "FastGelu" : "BiasGelu", kMsDomain, 1, inputs, {out});
        ++ctx.counts[fast ? "com.microsoft.FastGelu with bias" : "com.microsoft.BiasGelu"];
        ++rewrites;
        break;
      }
    }
    return rewrites;
  }
};

ONYX_REGISTER_PASS(BiasGeluFusion, 510);

}  // namespace
}  // namespace onyx
