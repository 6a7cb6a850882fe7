// Self-attention with one fused QKV projection split three ways (torch.onnx exports of Hugging
// Face GPT-2 eager attention) becomes one com.microsoft.Attention (extended):
//
//   x -> MatMul(W [h_in, 3h]) -> Add(b [3h])          (or, as HF Conv1D exports:
//        Reshape(x, [-1, h_in]) -> Gemm(W, b) -> Reshape[batch, seq, 3h])
//     -> Split(axis 2, [h, h, h]) -> q, k, v -> per-head Reshape + Transpose (K as K^T)
//     -> MatMul(q, k^T) -> Div(sqrt(d)) -> Where(causal slice of a tril buffer, ., fill)
//     -> Softmax -> MatMul(probs, v) -> Transpose(0,2,1,3) -> Reshape[batch, seq, h]
//
// The projection's weights are already packed as Attention wants them; the causal Where
// becomes unidirectional = 1. A padding-mask Add is handled as in AttentionFusion.
#include "optimizer/pass.h"
#include "optimizer/passes/attention_pattern.h"
#include "optimizer/pattern_util.h"
#include "providers/cpu/kernels/linalg/deferred_half_widening.h"

namespace onyx {
namespace {

using attention::AttentionMatch;
using attention::DimEquivalence;
using attention::DimExpr;

struct FusedProjection {
  std::vector<ir::Node*> nodes;
  std::string input;
  std::string weights;  // an existing initializer, or empty with `packed_weights` to add
  Tensor packed_weights;
  std::string bias;
  Tensor packed_bias;
  int64_t hidden_in = 0;
  int64_t width = 0;  // 3 * hidden
};

// MatMul(x, W) + b.
std::optional<FusedProjection> MatchMatMulAdd(GraphEditor& editor, const std::string& value, DimEquivalence& dims) {
  FusedProjection p;
  ir::Node* n = editor.Producer(value);
  ir::Node* mm = n;
  std::string bias;
  if (IsOp(n, "Add") && n->inputs.size() == 2) {
    mm = nullptr;
    for (int i : {0, 1}) {
      ir::Node* cand = editor.Producer(n->inputs[i]);
      if (IsOp(cand, "MatMul") && attention::ConstTensor(editor, n->inputs[1 - i])) {
        mm = cand;
        bias = n->inputs[1 - i];
        break;
      }
    }
    p.nodes.push_back(n);
  }
  if (!IsOp(mm, "MatMul") || mm->inputs.size() != 2) return std::nullopt;
  p.nodes.push_back(mm);
  auto w = attention::ConstTensor(editor, mm->inputs[1]);
  if (!w || w->dtype() != DataType::kFloat || w->rank() != 2) return std::nullopt;
  p.hidden_in = w->dim(0);
  p.width = w->dim(1);
  // A Constant node's value is not an initializer: give the fused node one.
  if (editor.Constant(mm->inputs[1]))
    p.weights = mm->inputs[1];
  else
    p.packed_weights = *w;
  if (!bias.empty()) {
    auto b = attention::ConstTensor(editor, bias);
    if (b->dtype() != DataType::kFloat || b->rank() != 1 || b->dim(0) != p.width) return std::nullopt;
    if (editor.Constant(bias))
      p.bias = bias;
    else
      p.packed_bias = *b;
  }
  p.input = mm->inputs[0];
  for (int64_t a : {0, 1}) {
    if (n != mm) dims.Link(value, a, mm->outputs[0], a);
    dims.Link(mm->outputs[0], a, p.input, a);
  }
  return p;
}

// Reshape(x, [-1, h_in]) -> Gemm(., W, C) -> Reshape(., [dim(x, 0), dim(x, 1), 3h]).
std::optional<FusedProjection> MatchConv1D(GraphEditor& editor, const std::string& value, DimEquivalence& dims) {
  FusedProjection p;
  ir::Node* out_reshape = editor.Producer(value);
  if (!IsOp(out_reshape, "Reshape") || out_reshape->inputs.size() < 2) return std::nullopt;
  ir::Node* gemm = editor.Producer(out_reshape->inputs[0]);
  if (!IsOp(gemm, "Gemm") || gemm->inputs.size() < 2) return std::nullopt;
  ir::Node* in_reshape = editor.Producer(gemm->inputs[0]);
  if (!IsOp(in_reshape, "Reshape") || in_reshape->inputs.size() < 2) return std::nullopt;
  if (AttrInt(*gemm, "transA", 0) != 0 || AttrFloat(*gemm, "alpha", 1.0f) != 1.0f) return std::nullopt;
  const bool has_c = gemm->inputs.size() > 2 && !gemm->inputs[2].empty();
  if (has_c && AttrFloat(*gemm, "beta", 1.0f) != 1.0f) return std::nullopt;
  auto w = attention::ConstTensor(editor, gemm->inputs[1]);
  if (!w || w->dtype() != DataType::kFloat || w->rank() != 2) return std::nullopt;
  const bool trans_b = AttrInt(*gemm, "transB", 0) != 0;
  p.hidden_in = w->dim(trans_b ? 1 : 0);
  p.width = w->dim(trans_b ? 0 : 1);
  if (!trans_b && editor.Constant(gemm->inputs[1])) {
    p.weights = gemm->inputs[1];
  } else {
    MaterializeDeferredWidening(*w);  // a float16 weight's values (HalfBodyToFloat)
    Tensor t(DataType::kFloat, {p.hidden_in, p.width});
    for (int64_t r = 0; r < p.hidden_in; ++r)
      for (int64_t c = 0; c < p.width; ++c)
        t.data<float>()[r * p.width + c] =
            trans_b ? w->data<float>()[c * p.hidden_in + r] : w->data<float>()[r * p.width + c];
    p.packed_weights = t;
  }
  if (has_c) {
    auto b = attention::ConstTensor(editor, gemm->inputs[2]);
    if (!b || b->dtype() != DataType::kFloat || b->size() != p.width) return std::nullopt;
    // [3h] or [1, 3h] add one bias row to every token.
    if (b->rank() == 2 && b->dim(0) != 1) return std::nullopt;
    if (b->rank() == 1 && editor.Constant(gemm->inputs[2]))
      p.bias = gemm->inputs[2];
    else
      p.packed_bias = b->Reshaped({p.width});
  }
  p.input = in_reshape->inputs[0];
  // The input is flattened to [batch * seq, h_in] and restored to [batch, seq, 3h].
  auto flat = attention::ConstInts(editor, in_reshape->inputs[1]);
  if (!flat || flat->size() != 2 || (*flat)[0] != -1 || (*flat)[1] != p.hidden_in) return std::nullopt;
  auto restored = attention::ShapeExprs(editor, out_reshape->inputs[1]);
  if (!restored || restored->size() != 3) return std::nullopt;
  const DimExpr& last = (*restored)[2];
  if (last.kind != DimExpr::Kind::kConst || last.constant != p.width) return std::nullopt;
  for (int64_t a : {0, 1}) {
    const DimExpr& e = (*restored)[a];
    const bool same = e.kind == DimExpr::Kind::kDim ? dims.Equal(e.value, e.axis, p.input, a)
                                                    : e.kind == DimExpr::Kind::kConst && e.constant > 0 &&
                                                          e.constant == dims.StaticSize(p.input, a);
    if (!same) return std::nullopt;
    dims.Link(value, a, p.input, a);
  }
  p.nodes = {out_reshape, gemm, in_reshape};
  return p;
}

// The three outputs of one Split of the projection along its last axis into [h, h, h].
ir::Node* MatchSplit(GraphEditor& editor, const AttentionMatch& m) {
  ir::Node* split = editor.Producer(m.q.projected);
  if (!IsOp(split, "Split") || split->outputs.size() != 3 || split->inputs.empty()) return nullptr;
  if (split->outputs[0] != m.q.projected || split->outputs[1] != m.k.projected || split->outputs[2] != m.v.projected)
    return nullptr;
  const int64_t axis = AttrInt(*split, "axis", 0);
  if (axis != 2 && axis != -1) return nullptr;
  std::vector<int64_t> sizes;
  if (split->opset >= 13) {
    if (split->inputs.size() > 1 && !split->inputs[1].empty()) {
      auto s = attention::ConstInts(editor, split->inputs[1]);
      if (!s) return nullptr;
      sizes = *s;
    }
  } else {
    sizes = AttrInts(*split, "split");
  }
  if (sizes.empty()) sizes.assign(3, m.hidden());  // an equal split of the checked 3h
  if (sizes != std::vector<int64_t>(3, m.hidden())) return nullptr;
  return split;
}

class GptAttentionFusion final : public Pass {
 public:
  std::string name() const override { return "GptAttentionFusion"; }
  OptLevel level() const override { return OptLevel::kExtended; }
  std::vector<std::string> providers() const override { return {"CPU"}; }

  int Apply(PassContext& ctx) override {
    if (!attention::AttentionKernelAvailable(ctx)) return 0;
    GraphEditor& editor = ctx.editor;
    int fused = 0;
    // Each rewrite replaces nodes by one computing the same output: the types stand.
    const auto frozen = editor.FreezeTypes();
    for (ir::Node* softmax : editor.NodesOfType("Softmax")) {
      auto m = attention::MatchCore(editor, softmax);
      if (!m) continue;
      ir::Node* split = MatchSplit(editor, *m);
      if (split == nullptr) continue;
      const std::string& qkv = split->inputs[0];
      DimEquivalence dims(editor);
      attention::LinkCore(*m, dims);
      auto proj = MatchMatMulAdd(editor, qkv, dims);
      if (!proj) proj = MatchConv1D(editor, qkv, dims);
      if (!proj || proj->width != 3 * m->hidden() || !attention::IsAttentionInput(editor, proj->input, proj->hidden_in))
        continue;
      for (const std::string& part : split->outputs)
        for (int64_t a : {0, 1}) dims.Link(part, a, qkv, a);
      if (!attention::CheckShapes(editor, *m, dims, proj->input)) continue;

      std::vector<ir::Node*> pattern = m->Nodes();
      pattern.push_back(split);
      pattern.insert(pattern.end(), proj->nodes.begin(), proj->nodes.end());
      std::set<std::string> keep = {proj->input};
      if (!m->mask_source.empty()) keep.insert(m->mask_source);
      if (!proj->weights.empty()) keep.insert(proj->weights);
      if (!proj->bias.empty()) keep.insert(proj->bias);
      auto removable = attention::RemovableNodes(editor, pattern, m->output, keep);
      if (!removable) continue;

      std::string weights = proj->weights, bias = proj->bias;
      if (weights.empty()) weights = editor.AddInitializer(proj->input + "_qkv_weight", proj->packed_weights);
      if (bias.empty() && proj->packed_bias.defined())
        bias = editor.AddInitializer(proj->input + "_qkv_bias", proj->packed_bias);
      attention::EmitAttention(ctx, *m, proj->input, weights, bias, *removable);
      ++fused;
    }
    return fused;
  }
};

ONYX_REGISTER_PASS(GptAttentionFusion, 251);

}  // namespace
}  // namespace onyx
