// Self-attention with separate Q, K and V projections (torch.onnx exports of Hugging Face BERT
// and ViT eager attention) becomes one com.microsoft.Attention (extended):
//
//   x -> MatMul(Wq) -> Add(bq) -> Reshape[b,s,n,d] -> Transpose(0,2,1,3) ------------.
//   x -> MatMul(Wk) -> Add(bk) -> Reshape[b,s,n,d] -> Transpose(0,2,3,1) -> MatMul(q,k^T)
//        -> Div(sqrt(d)) -> Add(extended mask) -> Softmax -> MatMul(probs, v) <- (V as Q)
//        -> Transpose(0,2,1,3) -> Reshape[b,s,n*d]
//
// The weights are packed into [hidden_in, 3 * hidden] and the biases into [3 * hidden] (new
// initializers); the extended mask (1 - mask[:, None, None, :]) * fill becomes mask_index =
// Cast(mask, int32) with mask_filter_value = fill; a non-default scaling becomes `scale`.
// It runs before the other extended fusions (BiasSoftmax would take the Add + Softmax).
#include <cstring>

#include "optimizer/pass.h"
#include "optimizer/passes/attention_pattern.h"
#include "optimizer/pattern_util.h"
#include "providers/cpu/kernels/linalg/deferred_half_widening.h"
#include "tensor/small_page_allocator.h"

namespace onyx {
namespace {

using attention::AttentionMatch;
using attention::DimEquivalence;

// MatMul(x, W) [+ bias], W a constant float [hidden_in, hidden], bias a constant [hidden].
struct Projection {
  ir::Node* matmul = nullptr;
  ir::Node* add = nullptr;
  std::string input;
  Tensor weight;
  Tensor bias;  // undefined when there is none
};

std::optional<Projection> MatchProjection(GraphEditor& editor, const std::string& value) {
  Projection p;
  ir::Node* n = editor.Producer(value);
  if (IsOp(n, "Add") && n->inputs.size() == 2) {
    for (int i : {0, 1}) {
      ir::Node* mm = editor.Producer(n->inputs[i]);
      auto bias = attention::ConstTensor(editor, n->inputs[1 - i]);
      if (!IsOp(mm, "MatMul") || !bias) continue;
      p.add = n;
      p.matmul = mm;
      p.bias = *bias;
      break;
    }
    if (p.matmul == nullptr) return std::nullopt;
  } else if (IsOp(n, "MatMul")) {
    p.matmul = n;
  } else {
    return std::nullopt;
  }
  if (p.matmul->inputs.size() != 2) return std::nullopt;
  auto weight = attention::ConstTensor(editor, p.matmul->inputs[1]);
  if (!weight || weight->dtype() != DataType::kFloat || weight->rank() != 2) return std::nullopt;
  p.weight = *weight;
  if (p.bias.defined() &&
      (p.bias.dtype() != DataType::kFloat || p.bias.rank() != 1 || p.bias.dim(0) != p.weight.dim(1)))
    return std::nullopt;
  p.input = p.matmul->inputs[0];
  return p;
}

class AttentionFusion final : public Pass {
 public:
  std::string name() const override { return "AttentionFusion"; }
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
      auto q = MatchProjection(editor, m->q.projected);
      auto k = MatchProjection(editor, m->k.projected);
      auto v = MatchProjection(editor, m->v.projected);
      if (!q || !k || !v || q->input != k->input || q->input != v->input) continue;
      const std::string input = q->input;
      const int64_t hidden_in = q->weight.dim(0), hidden = m->hidden();
      bool shapes_ok = true;
      for (const Projection* p : {&*q, &*k, &*v})
        shapes_ok = shapes_ok && p->weight.dim(0) == hidden_in && p->weight.dim(1) == hidden;
      if (!shapes_ok || !attention::IsAttentionInput(editor, input, hidden_in)) continue;

      DimEquivalence dims(editor);
      attention::LinkCore(*m, dims);
      for (const Projection* p : {&*q, &*k, &*v}) {
        const std::string& projected = p->add ? p->add->outputs[0] : p->matmul->outputs[0];
        for (int64_t a : {0, 1}) {
          if (p->add) dims.Link(projected, a, p->matmul->outputs[0], a);
          dims.Link(p->matmul->outputs[0], a, input, a);
        }
      }
      if (!attention::CheckShapes(editor, *m, dims, input)) continue;

      std::vector<ir::Node*> pattern = m->Nodes();
      for (const Projection* p : {&*q, &*k, &*v}) {
        pattern.push_back(p->matmul);
        if (p->add) pattern.push_back(p->add);
      }
      std::set<std::string> keep = {input};
      if (!m->mask_source.empty()) keep.insert(m->mask_source);
      auto removable = attention::RemovableNodes(editor, pattern, m->output, keep);
      if (!removable) continue;

      const std::string weights = editor.AddInitializer(input + "_qkv_weight", PackWeights(*q, *k, *v));
      std::string bias;
      if (q->bias.defined() || k->bias.defined() || v->bias.defined())
        bias = editor.AddInitializer(input + "_qkv_bias", PackBiases(*q, *k, *v));
      // HalfBodyToFloat's bfloat16 mark (linalg/bf16_gemm.h), when all three projections have it.
      std::vector<ir::Attribute> bf16;
      if (const ir::Attribute* mark = q->matmul->FindAttribute("onyx_bf16"))
        if (k->matmul->FindAttribute("onyx_bf16") && v->matmul->FindAttribute("onyx_bf16")) bf16.push_back(mark->Clone());
      ir::Node* fused_node = attention::EmitAttention(ctx, *m, input, weights, bias, *removable);
      for (auto& a : bf16) fused_node->attributes.push_back(std::move(a));
      ++fused;
    }
    return fused;
  }

 private:
  // [hidden_in, hq + hk + hv]: row r is Wq[r] | Wk[r] | Wv[r]. On small pages: the Attention
  // kernel packs it and the session drops it, and a fresh huge page costs a VM a host fault for
  // all 2 MB (as HalfBodyToFloat's widened MatMul weights, docs/memory.md). Three float16
  // weights whose float values are not written yet (DeferWidening) are joined as float16 and
  // deferred again: widening commutes with the join, and the kernel packs from float16.
  static Tensor PackWeights(const Projection& q, const Projection& k, const Projection& v) {
    const Tensor halves[3] = {DeferredHalfSource(q.weight), DeferredHalfSource(k.weight),
                              DeferredHalfSource(v.weight)};
    const bool from_half = halves[0].defined() && halves[1].defined() && halves[2].defined();
    const int64_t rows = q.weight.dim(0);
    int64_t cols = 0;
    for (const Projection* p : {&q, &k, &v}) {
      cols += p->weight.dim(1);
      if (!from_half) MaterializeDeferredWidening(p->weight);
    }
    const size_t elem = from_half ? sizeof(uint16_t) : sizeof(float);
    Tensor packed(from_half ? DataType::kFloat16 : DataType::kFloat, {rows, cols}, CpuSmallPageAllocator());
    auto* out = static_cast<char*>(packed.raw_data());
    for (int64_t r = 0; r < rows; ++r)
      for (int i = 0; i < 3; ++i) {
        const Tensor& w = from_half ? halves[i] : (i == 0 ? q : i == 1 ? k : v).weight;
        const size_t row_bytes = static_cast<size_t>(w.dim(1)) * elem;
        std::memcpy(out, static_cast<const char*>(w.raw_data()) + static_cast<size_t>(r) * row_bytes, row_bytes);
        out += row_bytes;
      }
    return from_half ? DeferWidening(packed) : packed;
  }

  // [hq + hk + hv], zeros for a projection without bias.
  static Tensor PackBiases(const Projection& q, const Projection& k, const Projection& v) {
    int64_t total = 0;
    for (const Projection* p : {&q, &k, &v}) total += p->weight.dim(1);
    Tensor packed = Tensor::Zeros(DataType::kFloat, {total});
    float* out = packed.data<float>();
    for (const Projection* p : {&q, &k, &v}) {
      const int64_t width = p->weight.dim(1);
      if (p->bias.defined()) std::memcpy(out, p->bias.data<float>(), static_cast<size_t>(width) * sizeof(float));
      out += width;
    }
    return packed;
  }
};

ONYX_REGISTER_PASS(AttentionFusion, 250);

}  // namespace
}  // namespace onyx
