// MatMul(A, Transpose(W)) with W a constant 2-D float matrix becomes com.microsoft.FusedMatMul(A,
// W, transB = 1) before constant folding (extended, CPU).
//
// Why not let constant folding make W^T: the kernel packs B either way, in one layout whichever
// way it reads W, so the folded copy only costs session creation: a fresh tensor the size of W,
// written by a transpose, read once by the pack and dropped. gpt2_small's head is such a
// Transpose of its 154 MB token embedding (which Gather keeps reading), about a tenth of its
// creation (docs/memory.md). MatMulScaleFusion makes the same FusedMatMul, but only after
// constant folding has already copied W.
#include "optimizer/fusion_util.h"
#include "optimizer/pass.h"
#include "optimizer/pattern_util.h"

namespace onyx {
namespace {

using namespace fusion;

// Whether a Transpose of a rank-2 value swaps its two dims (perm [1, 0] or the default).
bool SwapsMatrix(const ir::Node& t) {
  const std::vector<int64_t> perm = AttrInts(t, "perm");
  return perm.empty() || (perm.size() == 2 && perm[0] == 1 && perm[1] == 0);
}

class MatMulConstantTransposeFusion final : public Pass {
 public:
  std::string name() const override { return "MatMulConstantTransposeFusion"; }
  OptLevel level() const override { return OptLevel::kExtended; }
  std::vector<std::string> providers() const override { return {"CPU"}; }

  int Apply(PassContext& ctx) override {
    GraphEditor& editor = ctx.editor;
    if (!CanRun(ctx, "FusedMatMul", kMsDomain, 1)) return 0;
    int rewrites = 0;
    for (ir::Node* mm : editor.NodesOfType("MatMul")) {
      if (!IsOnnxOp(mm, "MatMul") || mm->inputs.size() != 2 || mm->outputs.size() != 1) continue;
      if (mm->inputs[0] == mm->inputs[1] || editor.Constant(mm->inputs[0]) != nullptr) continue;  // folded whole
      ir::Node* t = editor.Producer(mm->inputs[1]);
      if (!IsOnnxOp(t, "Transpose") || t->inputs.size() != 1 || SoleReader(editor, mm->inputs[1]) != mm) continue;
      const Tensor* w = editor.Constant(t->inputs[0]);
      if (w == nullptr || w->dtype() != DataType::kFloat || w->rank() != 2 || !SwapsMatrix(*t)) continue;
      // A is float as well in a valid model (MatMul's one T); its type may not be inferred yet.
      if (const DataType a = ElemType(editor, mm->inputs[0]); a != DataType::kFloat && a != DataType::kUndefined)
        continue;
      std::vector<ir::Attribute> attrs = {FloatAttr("alpha", 1.0f), IntAttr("transA", 0), IntAttr("transB", 1),
                                          IntAttr("transBatchA", 0), IntAttr("transBatchB", 0)};
      // HalfBodyToFloat's bfloat16 mark (linalg/bf16_gemm.h) stays with the product.
      if (const ir::Attribute* bf16 = mm->FindAttribute("onyx_bf16")) attrs.push_back(bf16->Clone());
      const std::vector<std::string> inputs = {mm->inputs[0], t->inputs[0]};
      const std::vector<std::string> outputs = mm->outputs;
      editor.RemoveNode(mm);
      editor.RemoveNode(t);
      ir::Node* node = AddFusedNode(editor, "FusedMatMul", kMsDomain, 1, inputs, outputs);
      node->attributes = std::move(attrs);
      ++ctx.counts["com.microsoft.FusedMatMul"];
      ++rewrites;
    }
    return rewrites;
  }
};

// After ShapeFolding (90), before ConstantFolding (100).
ONYX_REGISTER_PASS(MatMulConstantTransposeFusion, 95);

}  // namespace
}  // namespace onyx
