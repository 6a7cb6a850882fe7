// A float MatMul by a constant 2-D weight whose only reader finishes its rows pointwise becomes
// com.onyx.FusedMatMul (level "all"), which does that finishing in the GEMM epilogue while each
// tile is still in registers or L1:
//   MatMul -> BiasGelu(x, bias) / Gelu / FastGelu(x, bias?) / ONNX Gelu
//       => FusedMatMul(A, W, bias?) with activation "Gelu" or "FastGelu"
//   MatMul -> SkipLayerNormalization(x, skip, gamma, beta?, bias?)   (x either of the first two)
//       => FusedMatMul(A, W, bias?, skip) -> LayerNormalization(gamma, beta?, axis -1)
// The second keeps the sum as the FusedMatMul output (SkipLayerNormalization's 4th output when
// that is read). In BERT-like encoders these are the FFN's first projection and the two
// projections that feed each residual.
#include "optimizer/fusion_util.h"
#include "optimizer/pass.h"
#include "optimizer/pattern_util.h"

namespace onyx {
namespace {

using namespace fusion;

// A pointwise reader folded into the epilogue: its activation, bias and residual inputs.
struct Epilogue {
  std::string activation;
  std::string bias;
  std::string residual;
};

// The GELU forms: the MatMul output x must be the first input, any bias the second.
std::optional<Epilogue> GeluEpilogue(const ir::Node& r, const std::string& x) {
  if (r.inputs.empty() || r.inputs[0] != x || r.outputs.size() != 1) return std::nullopt;
  if (IsOp(&r, "BiasGelu", kMsDomain) && r.inputs.size() == 2) return Epilogue{"Gelu", r.inputs[1], ""};
  if (IsOp(&r, "FastGelu", kMsDomain) && r.inputs.size() <= 2)
    return Epilogue{"FastGelu", r.inputs.size() == 2 ? r.inputs[1] : "", ""};
  if (IsOp(&r, "Gelu", kMsDomain) && r.inputs.size() == 1) return Epilogue{"Gelu", "", ""};
  if (IsOnnxOp(&r, "Gelu", 20) && r.inputs.size() == 1) {
    const std::string approximate = AttrString(r, "approximate", "none");
    if (approximate == "none") return Epilogue{"Gelu", "", ""};
    if (approximate == "tanh") return Epilogue{"FastGelu", "", ""};
  }
  return std::nullopt;
}

class MatMulEpilogueFusion final : public Pass {
 public:
  std::string name() const override { return "MatMulEpilogueFusion"; }
  OptLevel level() const override { return OptLevel::kAll; }
  std::vector<std::string> providers() const override { return {"CPU"}; }

  int Apply(PassContext& ctx) override {
    GraphEditor& editor = ctx.editor;
    if (!CanRun(ctx, "FusedMatMul", kOnyxDomain, 1)) return 0;
    int rewrites = 0;
    for (ir::Node* mm : editor.NodesOfType("MatMul")) {
      if (!IsOnnxOp(mm, "MatMul") || mm->inputs.size() != 2 || mm->outputs.size() != 1) continue;
      const std::string& a = mm->inputs[0];
      const std::string& w = mm->inputs[1];
      const std::string& x = mm->outputs[0];
      const Tensor* weight = editor.Constant(w);
      if (weight == nullptr || weight->dtype() != DataType::kFloat || weight->rank() != 2) continue;
      if (ElemType(editor, a) != DataType::kFloat || RankOf(editor, a) < 1) continue;
      const int64_t n = weight->dim(1);
      ir::Node* reader = SoleReader(editor, x);
      if (reader == nullptr) continue;
      auto bias_ok = [&](const std::string& bias) {
        if (bias.empty()) return true;
        const auto* d = editor.DimsOf(bias);
        return d != nullptr && d->size() == 1 && DimIs((*d)[0], n) && ElemType(editor, bias) == DataType::kFloat;
      };
      if (auto gelu = GeluEpilogue(*reader, x)) {
        if (!bias_ok(gelu->bias)) continue;
        const std::string out = reader->outputs[0];
        RemoveAll(editor, {mm, reader});
        AddFusedNode(editor, "FusedMatMul", kOnyxDomain, 1, {a, w, gelu->bias}, {out})->attributes = {
            StringAttr("activation", gelu->activation)};
        ++ctx.counts["com.onyx.FusedMatMul + " + gelu->activation];
        ++rewrites;
        continue;
      }
      if (IsOp(reader, "SkipLayerNormalization", kMsDomain) && FuseSkipLayerNorm(ctx, mm, reader, bias_ok)) ++rewrites;
    }
    return rewrites;
  }

 private:
  template <class BiasOk>
  bool FuseSkipLayerNorm(PassContext& ctx, ir::Node* mm, ir::Node* sln, const BiasOk& bias_ok) {
    GraphEditor& editor = ctx.editor;
    const std::string& x = mm->outputs[0];
    if (sln->inputs.size() < 3 || sln->outputs.empty() || sln->outputs[0].empty()) return false;
    const int side = sln->inputs[0] == x ? 0 : sln->inputs[1] == x ? 1 : -1;
    if (side < 0 || sln->inputs[0] == sln->inputs[1]) return false;
    // Mean and inv_std_var (outputs 1 and 2) have no place in the rewrite.
    for (size_t i = 1; i < 3 && i < sln->outputs.size(); ++i)
      if (!sln->outputs[i].empty() && editor.UseCount(sln->outputs[i]) > 0) return false;
    const std::string skip = sln->inputs[1 - side];
    const auto* xd = editor.DimsOf(x);
    const auto* sd = editor.DimsOf(skip);
    if (xd == nullptr || sd == nullptr || !SameDims(*xd, *sd) || xd->empty()) return false;
    if (ElemType(editor, skip) != DataType::kFloat) return false;
    const std::string bias = sln->inputs.size() > 4 ? sln->inputs[4] : "";
    if (!bias_ok(bias)) return false;
    const int opset = mm->opset;
    if (!CanRun(ctx, "LayerNormalization", "", opset)) return false;
    const std::string a = mm->inputs[0], w = mm->inputs[1], gamma = sln->inputs[2];
    const std::string beta = sln->inputs.size() > 3 ? sln->inputs[3] : "";
    const std::string out = sln->outputs[0];
    const bool sum_read = sln->outputs.size() > 3 && !sln->outputs[3].empty();
    const std::string sum = sum_read ? sln->outputs[3] : editor.UniqueName(out + "_sum");
    const float eps = AttrFloat(*sln, "epsilon", 1e-12f);
    RemoveAll(editor, {mm, sln});
    AddFusedNode(editor, "FusedMatMul", kOnyxDomain, 1, {a, w, bias, skip}, {sum});
    AddFusedNode(editor, "LayerNormalization", "", opset, {sum, gamma, beta}, {out})->attributes = {
        IntAttr("axis", -1), FloatAttr("epsilon", eps)};
    ++ctx.counts["com.onyx.FusedMatMul + residual -> LayerNormalization"];
    return true;
  }
};

ONYX_REGISTER_PASS(MatMulEpilogueFusion, 560);

}  // namespace
}  // namespace onyx
