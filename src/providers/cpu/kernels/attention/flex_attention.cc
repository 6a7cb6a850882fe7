// FlexAttention (ai.onnx.preview, version 1): 4-D scaled dot-product attention with optional
// modifier subgraphs:
//   scores = (Q K^T) * scale;  scores = score_mod(scores);  probs = softmax(scores);
//   probs = prob_mod(probs);   Y = probs V
// The subgraphs see the whole [B, Hq, L, S] tensor in the softmax precision (softmax_precision,
// else float, or double for double inputs). Query head h reads KV head h / (Hq / Hkv).
// Rows whose every score is -inf get zero probabilities.
#include <cmath>
#include <limits>
#include <vector>

#include "base/type_traits.h"
#include "platform/thread_pool.h"
#include "providers/cpu/kernels/attention/compute_gemm.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

template <typename C>
void SoftmaxRowOrZero(C* row, int64_t n) {
  C mx = -std::numeric_limits<C>::infinity();
  for (int64_t j = 0; j < n; ++j) mx = std::max(mx, row[j]);
  if (mx == -std::numeric_limits<C>::infinity()) {
    std::fill(row, row + n, C(0));
    return;
  }
  C sum = 0;
  for (int64_t j = 0; j < n; ++j) sum += (row[j] = std::exp(row[j] - mx));
  for (int64_t j = 0; j < n; ++j) row[j] /= sum;
}

class FlexAttention final : public OpKernel {
 public:
  explicit FlexAttention(const KernelInfo& info)
      : has_scale_(info.HasAttr("scale")),
        scale_(info.GetFloatOr("scale", 1.0f)),
        precision_(static_cast<DataType>(info.GetIntOr("softmax_precision", 0))) {
    if (info.HasAttr("score_mod")) score_mod_ = &info.GetSubgraph("score_mod");
    if (info.HasAttr("prob_mod")) prob_mod_ = &info.GetSubgraph("prob_mod");
    if (precision_ != DataType::kUndefined && !TryDispatch(FloatTypes{}, precision_, [](auto) {}))
      info.Fail(StrCat("softmax_precision ", static_cast<int>(precision_), " is not a floating-point type"));
    for (const Subgraph* g : {score_mod_, prob_mod_})
      if (g != nullptr && (g->input_names().size() != 1 || g->output_names().size() != 1))
        info.Fail("score_mod and prob_mod must take one input and produce one output");
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& q = ctx.required_input(0);
    Dispatch(FloatTypes{}, q.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if (std::is_same_v<T, double> || precision_ == DataType::kDouble)
        ComputeTyped<T, double>(ctx);
      else
        ComputeTyped<T, float>(ctx);
    });
  }

 private:
  // Runs a modifier on `data` ([B, Hq, L, S] in C) through a tensor of the softmax precision.
  template <typename C>
  void ApplyModifier(KernelContext& ctx, const Subgraph& graph, DataType precision, const Shape& shape,
                     std::vector<C>& data, const char* name) const {
    Tensor in(precision, shape);
    Dispatch(FloatTypes{}, precision, ctx.node(), [&](auto tag) {
      using P = typename decltype(tag)::type;
      compute::FromComputeArray(data.data(), in.size(), in.data<P>());
    });
    std::vector<Value> outs = ctx.RunSubgraph(graph, {Value(in)});
    if (outs.size() != 1 || !outs[0].is_tensor()) ctx.Fail(StrCat(name, " must produce one tensor"));
    const Tensor& out = outs[0].tensor();
    if (out.shape() != shape)
      ctx.Fail(StrCat(name, " changed the shape ", ShapeToString(shape), " to ", ShapeToString(out.shape())));
    Dispatch(FloatTypes{}, out.dtype(), ctx.node(), [&](auto tag) {
      using P = typename decltype(tag)::type;
      compute::ToComputeArray(out.data<P>(), out.size(), data.data());
    });
  }

  template <typename T, typename C>
  void ComputeTyped(KernelContext& ctx) const {
    const Tensor& q = ctx.required_input(0);
    const Tensor& k = ctx.required_input(1);
    const Tensor& v = ctx.required_input(2);
    if (q.rank() != 4 || k.rank() != 4 || v.rank() != 4) ctx.Fail("Q, K and V must be 4-D");
    if (k.dtype() != q.dtype() || v.dtype() != q.dtype()) ctx.Fail("Q, K and V must share one element type");
    const int64_t batch = q.dim(0), hq = q.dim(1), lq = q.dim(2), e = q.dim(3);
    const int64_t hkv = k.dim(1), lk = k.dim(2), ev = v.dim(3);
    if (k.dim(0) != batch || v.dim(0) != batch || k.dim(3) != e || v.dim(1) != hkv || v.dim(2) != lk)
      ctx.Fail("K must be [B, Hkv, S, E] and V [B, Hkv, S, Ev] matching Q [B, Hq, L, E]");
    if (hkv <= 0 || hq % hkv) ctx.Fail(StrCat("q heads (", hq, ") must be a multiple of kv heads (", hkv, ")"));
    const int64_t group = hq / hkv;
    const DataType precision = precision_ != DataType::kUndefined
                                   ? precision_
                                   : (std::is_same_v<T, double> ? DataType::kDouble : DataType::kFloat);
    const C scale = has_scale_ ? static_cast<C>(scale_) : C(1) / std::sqrt(static_cast<C>(e));

    std::vector<C> qs(static_cast<size_t>(q.size())), ks(static_cast<size_t>(k.size())),
        vs(static_cast<size_t>(v.size()));
    compute::ToComputeArray(q.data<T>(), q.size(), qs.data());
    compute::ToComputeArray(k.data<T>(), k.size(), ks.data());
    compute::ToComputeArray(v.data<T>(), v.size(), vs.data());
    const Shape score_shape{batch, hq, lq, lk};
    std::vector<C> scores(static_cast<size_t>(batch * hq * lq * lk));
    ThreadPool* pool = ctx.thread_pool();
    ThreadPool::For(pool, batch * hq, static_cast<double>(lq * lk * e * 2), [&](int64_t begin, int64_t end) {
      for (int64_t bh = begin; bh < end; ++bh) {
        const int64_t kvh = (bh / hq) * hkv + (bh % hq) / group;
        compute::Gemm<C>(false, true, lq, lk, e, scale, qs.data() + bh * lq * e, e, ks.data() + kvh * lk * e, e, C(0),
                         scores.data() + bh * lq * lk, lk, nullptr);
      }
    });
    if (score_mod_ != nullptr) ApplyModifier(ctx, *score_mod_, precision, score_shape, scores, "score_mod");
    // Round to the softmax precision when it is narrower than the compute type.
    if (precision == DataType::kFloat16 || precision == DataType::kBFloat16) {
      Dispatch(TypeList<Float16, BFloat16>{}, precision, ctx.node(), [&](auto tag) {
        using P = typename decltype(tag)::type;
        for (C& s : scores) s = static_cast<C>(static_cast<float>(P(static_cast<float>(s))));
      });
    }
    for (int64_t r = 0; r < batch * hq * lq; ++r) SoftmaxRowOrZero(scores.data() + r * lk, lk);
    if (prob_mod_ != nullptr) ApplyModifier(ctx, *prob_mod_, precision, score_shape, scores, "prob_mod");
    T* y = ctx.AllocateOutput(0, q.dtype(), {batch, hq, lq, ev}).template data<T>();
    ThreadPool::For(pool, batch * hq, static_cast<double>(lq * lk * ev * 2), [&](int64_t begin, int64_t end) {
      std::vector<C> out(static_cast<size_t>(lq * ev));
      for (int64_t bh = begin; bh < end; ++bh) {
        const int64_t kvh = (bh / hq) * hkv + (bh % hq) / group;
        compute::Gemm<C>(false, false, lq, ev, lk, C(1), scores.data() + bh * lq * lk, lk, vs.data() + kvh * lk * ev,
                         ev, C(0), out.data(), ev, nullptr);
        compute::FromComputeArray(out.data(), lq * ev, y + bh * lq * ev);
      }
    });
  }

  bool has_scale_;
  float scale_;
  DataType precision_;
  const Subgraph* score_mod_ = nullptr;
  const Subgraph* prob_mod_ = nullptr;
};

ONYX_REGISTER_KERNEL("CPU", "ai.onnx.preview", "FlexAttention", 1, kOpsetMax, FlexAttention);

}  // namespace
}  // namespace onyx
