// MatMul + Add(bias) becomes Gemm (extended), as ONNX Runtime does:
// - A and B 2-D: Gemm(A, B, bias) with a bias Gemm can broadcast ([N], [1,N], [M,1], [M,N]);
// - A of another rank with every dim known, B 2-D with known dims and a [N] bias:
//   Reshape(A, [M, K]) -> Gemm -> Reshape(back to A's leading dims + [N]).
// Otherwise (symbolic batch or sequence dims) MatMul + Add stay: the bias Add then goes into
// BiasGelu or SkipLayerNormalization. MatMuls that feed or leave an attention block are left
// for the attention fusion, as ONNX Runtime leaves them.
#include "optimizer/fusion_util.h"
#include "optimizer/pass.h"
#include "optimizer/pattern_util.h"

namespace onyx {
namespace {

using namespace fusion;

// MatMul(Reshape(Transpose(MatMul(Softmax(...), V)))): the output projection of attention.
bool IsAttentionOutputProjection(GraphEditor& editor, const ir::Node& matmul) {
  const ir::Node* reshape = editor.Producer(matmul.inputs[0]);
  if (!IsOnnxOp(reshape, "Reshape")) return false;
  const ir::Node* transpose = editor.Producer(reshape->inputs[0]);
  if (!IsOnnxOp(transpose, "Transpose")) return false;
  const ir::Node* av = editor.Producer(transpose->inputs[0]);
  if (!IsOnnxOp(av, "MatMul")) return false;
  return IsOnnxOp(editor.Producer(av->inputs[0]), "Softmax");
}

// A LayerNormalization read by exactly three MatMuls (Q, K, V), one Add (the residual) and
// otherwise Shapes: the input projections of attention.
bool IsAttentionInputProjection(GraphEditor& editor, const ir::Node& matmul) {
  const ir::Node* ln = editor.Producer(matmul.inputs[0]);
  if (!IsOnnxOp(ln, "LayerNormalization")) return false;
  int matmuls = 0, adds = 0, others = 0;
  for (const ir::Node* r : editor.Consumers(ln->outputs[0])) {
    if (IsOnnxOp(r, "MatMul"))
      ++matmuls;
    else if (IsOnnxOp(r, "Add"))
      ++adds;
    else if (!IsOnnxOp(r, "Shape"))
      ++others;
  }
  return matmuls == 3 && adds == 1 && others == 0;
}

class MatMulAddFusion final : public Pass {
 public:
  std::string name() const override { return "MatMulAddFusion"; }
  OptLevel level() const override { return OptLevel::kExtended; }

  int Apply(PassContext& ctx) override {
    GraphEditor& editor = ctx.editor;
    int rewrites = 0;
    // Types from before the first rewrite: a rewrite keeps the types of the values it leaves.
    const auto frozen = editor.FreezeTypes();
    for (ir::Node* matmul : editor.NodesOfType("MatMul")) {
      if (matmul->opset < 7 || matmul->inputs.size() != 2 || matmul->outputs.size() != 1) continue;
      ir::Node* add = SoleReader(editor, matmul->outputs[0]);
      if (!IsOnnxOp(add, "Add", 7) || add->inputs.size() != 2) continue;
      const std::string& bias = OtherInput(*add, matmul->outputs[0]);
      if (bias.empty() || bias == matmul->outputs[0]) continue;
      const DataType dt = ElemType(editor, matmul->inputs[0]);
      if (!TypeIn(dt, {DataType::kFloat, DataType::kFloat16}) || ElemType(editor, matmul->inputs[1]) != dt ||
          ElemType(editor, bias) != dt)
        continue;
      const auto* a = editor.DimsOf(matmul->inputs[0]);
      const auto* b = editor.DimsOf(matmul->inputs[1]);
      const auto* c = editor.DimsOf(bias);
      if (a == nullptr || b == nullptr || c == nullptr || b->size() != 2 || a->empty()) continue;
      const Dim& n = (*b)[1];
      if (a->size() == 2) {
        const Dim& m = (*a)[0];
        const bool bias_ok = (c->size() == 1 && SameDim((*c)[0], n)) ||
                             (c->size() == 2 && DimIs((*c)[0], 1) && SameDim((*c)[1], n)) ||
                             (c->size() == 2 && SameDim((*c)[0], m) && (DimIs((*c)[1], 1) || SameDim((*c)[1], n)));
        if (!bias_ok || !CanRun(ctx, "Gemm", "", matmul->opset)) continue;
        const std::vector<std::string> inputs = {matmul->inputs[0], matmul->inputs[1], bias};
        const std::string out = add->outputs[0];
        const int opset = matmul->opset;
        RemoveAll(editor, {matmul, add});
        AddFusedNode(editor, "Gemm", "", opset, inputs, {out});
        ++ctx.counts["Gemm"];
        ++rewrites;
        continue;
      }
      // Other ranks: only with every dim of A known, and not around attention.
      const std::optional<Shape> a_shape = StaticShape(*a);
      if (!a_shape || !(*b)[0].known() || !n.known() || c->size() != 1 || !SameDim((*c)[0], n)) continue;
      if (IsAttentionOutputProjection(editor, *matmul) || IsAttentionInputProjection(editor, *matmul)) continue;
      if (!CanRun(ctx, "Gemm", "", matmul->opset) || !CanRun(ctx, "Reshape", "", matmul->opset)) continue;
      int64_t m = 1;
      for (size_t i = 0; i + 1 < a_shape->size(); ++i) m *= (*a_shape)[i];
      const int64_t k = (*b)[0].value;
      if (a_shape->back() != k) continue;
      Shape out_shape(a_shape->begin(), a_shape->end() - 1);
      out_shape.push_back(n.value);
      auto shape_tensor = [](const Shape& s) {
        return Tensor::FromVector<int64_t>(DataType::kInt64, {static_cast<int64_t>(s.size())}, s);
      };
      const std::string in_shape = editor.AddInitializer(matmul->name + "_gemm_input_shape", shape_tensor({m, k}));
      const std::string res_shape = editor.AddInitializer(matmul->name + "_gemm_output_shape", shape_tensor(out_shape));
      const std::string a2d = editor.UniqueName(matmul->outputs[0] + "_gemm_input");
      const std::string y2d = editor.UniqueName(matmul->outputs[0] + "_gemm_output");
      const std::string a_in = matmul->inputs[0], b_in = matmul->inputs[1], out = add->outputs[0];
      const std::string bias_in = bias;
      const int opset = matmul->opset;
      RemoveAll(editor, {matmul, add});
      AddFusedNode(editor, "Reshape", "", opset, {a_in, in_shape}, {a2d});
      AddFusedNode(editor, "Gemm", "", opset, {a2d, b_in, bias_in}, {y2d});
      AddFusedNode(editor, "Reshape", "", opset, {y2d, res_shape}, {out});
      ++ctx.counts["Reshape+Gemm+Reshape"];
      ++rewrites;
    }
    return rewrites;
  }
};

ONYX_REGISTER_PASS(MatMulAddFusion, 500);

}  // namespace
}  // namespace onyx
