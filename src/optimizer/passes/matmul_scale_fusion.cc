// MatMul with constant scalar scaling and transposed inputs becomes com.microsoft.FusedMatMul
// (extended): Y = alpha * op(A) * op(B), where
// - Mul/Div by a one-element constant on an input or on the output multiplies alpha;
// - a Transpose that swaps only the last two dims of an input becomes transA/transB.
// An existing FusedMatMul absorbs more of them the same way.
#include "optimizer/fusion_util.h"
#include "optimizer/pass.h"
#include "optimizer/pattern_util.h"

namespace onyx {
namespace {

using namespace fusion;

// The value scaled and the factor of Mul(x, s), Mul(s, x) or Div(x, s), s a one-element
// constant of no higher rank than x (so the scaling keeps x's shape).
std::optional<std::pair<std::string, double>> MatchScale(GraphEditor& editor, const ir::Node* n) {
  const bool mul = IsOnnxOp(n, "Mul", 7), div = IsOnnxOp(n, "Div", 7);
  if ((!mul && !div) || n->inputs.size() != 2) return std::nullopt;
  for (int s = mul ? 0 : 1; s < 2; ++s) {
    const std::string& x = n->inputs[1 - s];
    auto factor = ConstScalar(editor, n->inputs[s]);
    if (!factor || ConstValue(editor, x)) continue;
    const int64_t x_rank = RankOf(editor, x);
    if (x_rank < 0 || RankOf(editor, n->inputs[s]) > x_rank) continue;
    if (div && *factor == 0.0) return std::nullopt;
    return std::make_pair(x, div ? 1.0 / *factor : *factor);
  }
  return std::nullopt;
}

// Whether a Transpose swaps exactly the last two dims.
bool SwapsLastTwoDims(GraphEditor& editor, const ir::Node& t) {
  std::vector<int64_t> perm = AttrInts(t, "perm");
  if (perm.empty()) {  // the default reverses the dims: a swap only for rank 2
    const int64_t rank = RankOf(editor, t.inputs[0]);
    return rank == 2;
  }
  const size_t r = perm.size();
  if (r < 2) return false;
  for (size_t i = 0; i + 2 < r; ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return perm[r - 2] == static_cast<int64_t>(r - 1) && perm[r - 1] == static_cast<int64_t>(r - 2);
}

class MatMulScaleFusion final : public Pass {
 public:
  std::string name() const override { return "MatMulScaleFusion"; }
  OptLevel level() const override { return OptLevel::kExtended; }
  std::vector<std::string> providers() const override { return {"CPU"}; }

  int Apply(PassContext& ctx) override {
    GraphEditor& editor = ctx.editor;
    int rewrites = 0;
    if (!CanRun(ctx, "FusedMatMul", kMsDomain, 1)) return 0;
    // Each rewrite replaces nodes by one computing the same output: the types stand.
    const auto frozen = editor.FreezeTypes();
    std::vector<ir::Node*> anchors = editor.NodesOfType("MatMul");
    for (ir::Node* n : editor.NodesOfType("FusedMatMul", kMsDomain)) anchors.push_back(n);
    for (ir::Node* mm : anchors) {
      if (mm->inputs.size() != 2 || mm->outputs.size() != 1) continue;
      const DataType dt = ElemType(editor, mm->inputs[0]);
      if (!TypeIn(dt, {DataType::kFloat, DataType::kFloat16, DataType::kDouble}) ||
          ElemType(editor, mm->inputs[1]) != dt)
        continue;
      const bool fused = !mm->domain.empty();
      double alpha = fused ? AttrFloat(*mm, "alpha", 1.0f) : 1.0;
      int64_t trans[2] = {fused ? AttrInt(*mm, "transA", 0) : 0, fused ? AttrInt(*mm, "transB", 0) : 0};
      const int64_t trans_batch[2] = {fused ? AttrInt(*mm, "transBatchA", 0) : 0,
                                      fused ? AttrInt(*mm, "transBatchB", 0) : 0};
      std::vector<std::string> inputs = mm->inputs;
      std::vector<ir::Node*> folded;
      // MatMul(x, x) reads one value twice: its producer cannot be folded into one side.
      const int foldable_inputs = inputs[0] == inputs[1] ? 0 : 2;
      for (int i = 0; i < foldable_inputs; ++i) {
        // A scale and a transpose may come in either order in front of an input.
        ir::Node* reader_node = mm;
        for (int step = 0; step < 2; ++step) {
          ir::Node* p = editor.Producer(inputs[i]);
          if (p == nullptr || SoleReader(editor, inputs[i]) != reader_node) break;
          if (auto scale = MatchScale(editor, p)) {
            alpha *= scale->second;
            inputs[i] = scale->first;
          } else if (IsOnnxOp(p, "Transpose") && trans_batch[i] == 0 && SwapsLastTwoDims(editor, *p)) {
            trans[i] ^= 1;
            inputs[i] = p->inputs[0];
          } else {
            break;
          }
          folded.push_back(p);
          reader_node = p;
        }
      }
      std::string result = mm->outputs[0];
      ir::Node* reader = SoleReader(editor, result);
      if (reader != nullptr) {
        if (auto scale = MatchScale(editor, reader); scale && scale->first == result) {
          alpha *= scale->second;
          folded.push_back(reader);
          result = reader->outputs[0];
        }
      }
      if (folded.empty()) continue;
      std::vector<ir::Attribute> attrs = {FloatAttr("alpha", static_cast<float>(alpha)), IntAttr("transA", trans[0]),
                                          IntAttr("transB", trans[1]), IntAttr("transBatchA", trans_batch[0]),
                                          IntAttr("transBatchB", trans_batch[1])};
      // HalfBodyToFloat's bfloat16 mark (linalg/bf16_gemm.h) stays with the product.
      if (const ir::Attribute* bf16 = mm->FindAttribute("onyx_bf16")) attrs.push_back(bf16->Clone());
      folded.push_back(mm);
      RemoveAll(editor, folded);
      ir::Node* node = AddFusedNode(editor, "FusedMatMul", kMsDomain, 1, inputs, {result});
      node->attributes = std::move(attrs);
      ++ctx.counts["com.microsoft.FusedMatMul"];
      ++rewrites;
    }
    return rewrites;
  }
};

ONYX_REGISTER_PASS(MatMulScaleFusion, 530);

}  // namespace
}  // namespace onyx
