// LinearAttention (opset 27): recurrent linear attention over packed [B, T, H*D] inputs with
// a per-KV-head state S [d_k, d_v] (past_state/present_state [B, H_kv, d_k, d_v]):
//   linear:      S = S + k v^T
//   gated:       S = exp(g) S + k v^T                       (g per key dim or per head)
//   delta:       S = S + k (beta (v - S^T k))^T
//   gated_delta: S' = exp(g) S;  S = S' + k (beta (v - S'^T k))^T
//   o = scale q^T S   (query head h reads KV head h / (H_q / H_kv)); scale defaults to 1/sqrt(d_k).
// float16/bfloat16 compute in float; the state is carried in the compute type.
#include <cmath>
#include <vector>

#include "base/type_traits.h"
#include "platform/thread_pool.h"
#include "providers/cpu/kernels/attention/compute_gemm.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

class LinearAttention final : public OpKernel {
 public:
  explicit LinearAttention(const KernelInfo& info)
      : q_heads_(info.GetIntOr("q_num_heads", 0)),
        kv_heads_(info.GetIntOr("kv_num_heads", 0)),
        scale_(info.GetFloatOr("scale", 0.0f)) {
    if (q_heads_ <= 0 || kv_heads_ <= 0 || q_heads_ % kv_heads_)
      info.Fail("q_num_heads and kv_num_heads must be positive, q_num_heads a multiple of kv_num_heads");
    const std::string rule = info.GetStringOr("update_rule", "gated_delta");
    if (rule == "linear")
      gated_ = false, delta_ = false;
    else if (rule == "gated")
      gated_ = true, delta_ = false;
    else if (rule == "delta")
      gated_ = false, delta_ = true;
    else if (rule == "gated_delta")
      gated_ = true, delta_ = true;
    else
      info.Fail(StrCat("unknown update_rule '", rule, "'"));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& q = ctx.required_input(0);
    Dispatch(FloatTypes{}, q.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      ComputeTyped<T>(ctx);
    });
  }

 private:
  template <typename T>
  void ComputeTyped(KernelContext& ctx) const {
    using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
    const Tensor& q = ctx.required_input(0);
    const Tensor& k = ctx.required_input(1);
    const Tensor& v = ctx.required_input(2);
    const Tensor* past = ctx.input(3);
    const Tensor* decay = ctx.input(4);
    const Tensor* beta = ctx.input(5);
    for (const Tensor* t : {&q, &k, &v})
      if (t->rank() != 3 || t->dtype() != q.dtype())
        ctx.Fail("query, key and value must be 3-D [B, T, H*D] tensors of one element type");
    const int64_t batch = q.dim(0), len = q.dim(1);
    if (k.dim(0) != batch || v.dim(0) != batch || k.dim(1) != len || v.dim(1) != len)
      ctx.Fail("query, key and value must share batch size and sequence length");
    if (q.dim(2) % q_heads_ || k.dim(2) % kv_heads_ || v.dim(2) % kv_heads_)
      ctx.Fail("hidden sizes must be multiples of the head counts");
    const int64_t dk = q.dim(2) / q_heads_, dv = v.dim(2) / kv_heads_;
    if (k.dim(2) / kv_heads_ != dk) ctx.Fail("key head size differs from query head size");
    const int64_t group = q_heads_ / kv_heads_;
    if (past != nullptr && (past->dtype() != q.dtype() || past->shape() != Shape{batch, kv_heads_, dk, dv}))
      ctx.Fail(StrCat("past_state must be [", batch, ", ", kv_heads_, ", ", dk, ", ", dv, "] of the query type"));
    int64_t decay_per_head = 0;  // 1: one gate per head, 0: one per key dimension
    if (gated_) {
      if (decay == nullptr) ctx.Fail("decay is required by the gated update rules");
      if (decay->dtype() != q.dtype() || decay->rank() != 3 || decay->dim(0) != batch || decay->dim(1) != len ||
          (decay->dim(2) != kv_heads_ * dk && decay->dim(2) != kv_heads_))
        ctx.Fail(StrCat("decay must be [", batch, ", ", len, ", ", kv_heads_ * dk, " or ", kv_heads_, "]"));
      decay_per_head = decay->dim(2) == kv_heads_ ? 1 : 0;
      if (kv_heads_ * dk == kv_heads_) decay_per_head = 0;  // d_k == 1: both readings agree
    }
    int64_t beta_heads = 0;
    if (delta_) {
      if (beta == nullptr) ctx.Fail("beta is required by the delta update rules");
      if (beta->dtype() != q.dtype() || beta->rank() != 3 || beta->dim(0) != batch || beta->dim(1) != len ||
          (beta->dim(2) != kv_heads_ && beta->dim(2) != 1))
        ctx.Fail(StrCat("beta must be [", batch, ", ", len, ", ", kv_heads_, " or 1]"));
      beta_heads = beta->dim(2);
    }
    const C scale = scale_ != 0.0f ? static_cast<C>(scale_) : C(1) / std::sqrt(static_cast<C>(dk));
    T* out = ctx.AllocateOutput(0, q.dtype(), {batch, len, q_heads_ * dv}).template data<T>();
    T* present = ctx.AllocateOutput(1, q.dtype(), {batch, kv_heads_, dk, dv}).template data<T>();
    const T* qp = q.data<T>();
    const T* kp = k.data<T>();
    const T* vp = v.data<T>();
    const double cost = static_cast<double>(len * dk * dv * (4 + group * 2));
    ThreadPool::For(ctx.thread_pool(), batch * kv_heads_, cost, [&](int64_t begin, int64_t end) {
      std::vector<C> state(static_cast<size_t>(dk * dv)), kt(dk), vt(dv), qt(dk), tmp(dv);
      for (int64_t bh = begin; bh < end; ++bh) {
        const int64_t b = bh / kv_heads_, h = bh % kv_heads_;
        if (past != nullptr)
          compute::ToComputeArray(past->data<T>() + bh * dk * dv, dk * dv, state.data());
        else
          std::fill(state.begin(), state.end(), C(0));
        for (int64_t t = 0; t < len; ++t) {
          const int64_t bt = b * len + t;
          compute::ToComputeArray(kp + bt * kv_heads_ * dk + h * dk, dk, kt.data());
          compute::ToComputeArray(vp + bt * kv_heads_ * dv + h * dv, dv, vt.data());
          if (gated_) {
            const T* g = decay->data<T>() + bt * decay->dim(2) + (decay_per_head ? h : h * dk);
            for (int64_t i = 0; i < dk; ++i) {
              const C f = std::exp(static_cast<C>(ToCompute(g[decay_per_head ? 0 : i])));
              for (int64_t j = 0; j < dv; ++j) state[i * dv + j] *= f;
            }
          }
          if (delta_) {
            // tmp = beta (v - S^T k): the correction written back along k.
            const C bv = static_cast<C>(ToCompute(beta->data<T>()[bt * beta_heads + (beta_heads == 1 ? 0 : h)]));
            std::fill(tmp.begin(), tmp.end(), C(0));
            for (int64_t i = 0; i < dk; ++i)
              for (int64_t j = 0; j < dv; ++j) tmp[j] += state[i * dv + j] * kt[i];
            for (int64_t j = 0; j < dv; ++j) tmp[j] = bv * (vt[j] - tmp[j]);
          } else {
            tmp = vt;
          }
          for (int64_t i = 0; i < dk; ++i)
            for (int64_t j = 0; j < dv; ++j) state[i * dv + j] += kt[i] * tmp[j];
          for (int64_t g = 0; g < group; ++g) {
            const int64_t hq = h * group + g;
            compute::ToComputeArray(qp + bt * q_heads_ * dk + hq * dk, dk, qt.data());
            std::fill(tmp.begin(), tmp.end(), C(0));
            for (int64_t i = 0; i < dk; ++i)
              for (int64_t j = 0; j < dv; ++j) tmp[j] += qt[i] * state[i * dv + j];
            T* o = out + bt * q_heads_ * dv + hq * dv;
            for (int64_t j = 0; j < dv; ++j) o[j] = FromCompute<T>(static_cast<ComputeType<T>>(scale * tmp[j]));
          }
        }
        compute::FromComputeArray(state.data(), dk * dv, present + bh * dk * dv);
      }
    });
  }

  int64_t q_heads_;
  int64_t kv_heads_;
  float scale_;
  bool gated_ = true;
  bool delta_ = true;
};

ONYX_CPU_KERNEL("LinearAttention", 27, kOpsetMax, LinearAttention);

}  // namespace
}  // namespace onyx
