// com.microsoft.MultiHeadAttention: attention over already projected Q, K, V.
// Layouts: query (B, S, D) or packed QKV (B, S, N, 3, H); key (B, L, D), packed KV (B, L, N, 2, H)
// or BNSH (B, N, L, H) (cross attention with cached K/V: no K/V bias, no past); value (B, L, D_v)
// or (B, N, L, H_v). bias (D + D + D_v) is added to Q, K, V; past_key/past_value (B, N, P, H)
// are prepended and present_key/present_value (B, N, P + L, H) returned. key_padding_mask (B),
// (B, T), (B, S, T); attention_bias (B|1, N|1, S, T); unidirectional adds a causal mask;
// output 3 (qk) holds the scores before softmax. float; float16/bfloat16 compute in float with
// outputs rounded once, as ONNX Runtime's CPU provider runs them (Casts around its float kernel).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "platform/thread_pool.h"
#include "providers/cpu/kernels/contrib/attention_core.h"
#include "providers/cpu/kernels/contrib/float_compute.h"
#include "providers/kernel.h"

namespace onyx::contrib {
namespace {

class MultiHeadAttention final : public OpKernel {
 public:
  explicit MultiHeadAttention(const KernelInfo& info)
      : num_heads_(info.GetInt("num_heads")),
        unidirectional_(info.GetIntOr("unidirectional", 0) != 0),
        scale_(info.GetFloatOr("scale", 0.0f)),
        mask_filter_value_(info.GetFloatOr("mask_filter_value", -10000.0f)) {
    if (num_heads_ <= 0) info.Fail(StrCat("attribute 'num_heads' must be positive, got ", num_heads_));
    if (info.has_input(8)) info.Fail("input 'past_sequence_length' (shared past/present buffers) is not supported on CPU");
    if (info.has_input(9)) info.Fail("input 'cache_indirection' (beam search) is not supported on CPU");
  }

  void Compute(KernelContext& ctx) const override {
    if (!HasHalfInputs(ctx)) return ComputeFloat(ctx);
    // float16/bfloat16 compute in float, as ONNX Runtime's Casts around its float kernel do.
    const DataType dt = CommonInputType(ctx, {0, 1, 2, 3, 5, 6, 7});
    FloatComputeContext wide(ctx);
    ComputeFloat(wide);
    wide.Finish(dt);
  }

 private:
  void ComputeFloat(KernelContext& ctx) const {
    const Tensor& query = ctx.required_input(0);
    const Tensor* key = ctx.input(1);
    const Tensor* value = ctx.input(2);
    const Tensor* bias = ctx.input(3);
    const Tensor* mask = ctx.input(4);
    const Tensor* attn_bias = ctx.input(5);
    const Tensor* past_key = ctx.input(6);
    const Tensor* past_value = ctx.input(7);
    for (const Tensor* t : {&query, key, value, bias, attn_bias, past_key, past_value})
      if (t && t->dtype() != DataType::kFloat)
        ctx.Fail(StrCat("element type ", DataTypeName(t->dtype()), " is not supported (float, float16, bfloat16)"));
    const int64_t N = num_heads_;
    if (query.rank() != 3 && query.rank() != 5) ctx.Fail("input 'query' must be 3-D, or 5-D packed QKV");
    const int64_t B = query.dim(0), S = query.dim(1);

    // Layout of every operand as strided head rows.
    HeadRows q, k, v;
    int64_t D = 0, Dv = 0, H = 0, Hv = 0, L = 0;
    bool kv_bnsh = false;
    if (query.rank() == 5) {
      if (key || value) ctx.Fail("packed QKV query (B, S, N, 3, H) takes no key or value");
      if (query.dim(2) != N || query.dim(3) != 3) ctx.Fail(StrCat("packed QKV query must be (B, S, ", N, ", 3, H)"));
      H = Hv = query.dim(4);
      D = Dv = N * H;
      L = S;
      const float* base = query.data<float>();
      const int64_t row = N * 3 * H;
      q = {base, S * row, 3 * H, row};
      k = {base + H, S * row, 3 * H, row};
      v = {base + 2 * H, S * row, 3 * H, row};
    } else {
      D = query.dim(2);
      if (D % N != 0) ctx.Fail(StrCat("query hidden size ", D, " must be a multiple of num_heads ", N));
      H = D / N;
      q = {query.data<float>(), S * D, H, D};
      if (key == nullptr) ctx.Fail("input 'key' is required unless query is packed QKV");
      if (key->rank() == 5) {
        if (value) ctx.Fail("packed KV key (B, L, N, 2, H) takes no value");
        if (key->dim(0) != B || key->dim(2) != N || key->dim(3) != 2 || key->dim(4) != H)
          ctx.Fail(StrCat("packed KV key must be (", B, ", L, ", N, ", 2, ", H, ")"));
        L = key->dim(1);
        Hv = H;
        Dv = D;
        const int64_t row = N * 2 * H;
        k = {key->data<float>(), L * row, 2 * H, row};
        v = {key->data<float>() + H, L * row, 2 * H, row};
      } else {
        if (value == nullptr) ctx.Fail("input 'value' is required with a separate key");
        if (key->rank() == 3 && value->rank() == 3) {
          if (key->dim(0) != B || key->dim(2) != D || value->dim(0) != B || value->dim(1) != key->dim(1))
            ctx.Fail(StrCat("key must be (", B, ", L, ", D, ") and value (", B, ", L, D_v)"));
          L = key->dim(1);
          Dv = value->dim(2);
          if (Dv % N != 0) ctx.Fail(StrCat("value hidden size ", Dv, " must be a multiple of num_heads ", N));
          Hv = Dv / N;
          k = {key->data<float>(), L * D, H, D};
          v = {value->data<float>(), L * Dv, Hv, Dv};
        } else if (key->rank() == 4 && value->rank() == 4) {
          if (key->dim(0) != B || key->dim(1) != N || key->dim(3) != H || value->dim(0) != B || value->dim(1) != N ||
              value->dim(2) != key->dim(2))
            ctx.Fail(StrCat("BNSH key must be (", B, ", ", N, ", L, ", H, ") and value (", B, ", ", N, ", L, H_v)"));
          kv_bnsh = true;
          L = key->dim(2);
          Hv = value->dim(3);
          Dv = N * Hv;
          k = {key->data<float>(), N * L * H, L * H, H};
          v = {value->data<float>(), N * L * Hv, L * Hv, Hv};
        } else {
          ctx.Fail("key and value must both be 3-D (B, L, hidden) or both 4-D (B, N, L, head_size)");
        }
      }
    }
    if (bias && (bias->rank() != 1 || bias->dim(0) != D + D + Dv))
      ctx.Fail(StrCat("input 'bias' must have shape (", D + D + Dv, ")"));

    int64_t P = 0;
    if (past_key || past_value) {
      if (!past_key || !past_value) ctx.Fail("past_key and past_value must be given together");
      if (kv_bnsh) ctx.Fail("past_key/past_value cannot be used with BNSH key and value");
      const Shape& pk = past_key->shape();
      const Shape& pv = past_value->shape();
      if (pk.size() != 4 || pk[0] != B || pk[1] != N || pk[3] != H || pv.size() != 4 || pv[0] != B || pv[1] != N ||
          pv[2] != pk[2] || pv[3] != Hv)
        ctx.Fail(StrCat("past_key must be (", B, ", ", N, ", P, ", H, ") and past_value (", B, ", ", N, ", P, ", Hv,
                        ")"));
      P = pk[2];
    }
    const int64_t T = P + L;
    std::pair<int64_t, int64_t> bias_strides{0, 0};
    if (attn_bias) bias_strides = AttentionBiasStrides(ctx, *attn_bias, B, N, S, T);
    if (mask && mask->rank() == 2 && mask->dim(1) == L && P > 0)
      ctx.Fail("a (batch, kv_sequence_length) key_padding_mask cannot be used with past_key; give (batch, total)");
    const std::vector<float> add_mask =
        BuildAdditiveMask(ctx, mask, B, S, P, T, unidirectional_ && S > 1, mask_filter_value_, "key_padding_mask");

    Tensor& out = ctx.AllocateOutput(0, DataType::kFloat, {B, S, Dv});
    float* present_k = ctx.has_output(1) ? ctx.AllocateOutput(1, DataType::kFloat, {B, N, T, H}).data<float>() : nullptr;
    float* present_v = ctx.has_output(2) ? ctx.AllocateOutput(2, DataType::kFloat, {B, N, T, Hv}).data<float>() : nullptr;
    float* qk_out = ctx.has_output(3) ? ctx.AllocateOutput(3, DataType::kFloat, {B, N, S, T}).data<float>() : nullptr;
    if (B * S == 0 && !present_k && !present_v) return;

    const float scale = scale_ == 0.0f ? 1.0f / std::sqrt(static_cast<float>(H)) : scale_;
    const float* bias_data = bias ? bias->data<float>() : nullptr;
    float* out_data = out.data<float>();
    ThreadPool::For(ctx.thread_pool(), B * N, AttendCost(S, T, H, Hv), [&](int64_t begin, int64_t end) {
      std::vector<float> scratch(static_cast<size_t>(S * T));
      std::vector<float> q_local, k_local, v_local;
      for (int64_t i = begin; i < end; ++i) {
        const int64_t b = i / N, h = i % N;
        const float* qp = q.At(b, h);
        int64_t q_stride = q.row_stride;
        if (bias_data) {
          q_local.resize(static_cast<size_t>(S * H));
          GatherRows(qp, q_stride, S, H, bias_data + h * H, q_local.data(), H);
          qp = q_local.data();
          q_stride = H;
        }
        // K and V rows: past rows, then the new rows plus their bias, in present or a local buffer.
        auto kv_rows = [&](const HeadRows& view, const Tensor* past, float* present, int64_t dim,
                           const float* head_bias, std::vector<float>& local, int64_t& stride) -> const float* {
          const float* src = view.At(b, h);
          if (!past && !present && !head_bias) {
            stride = view.row_stride;
            return src;
          }
          float* dst = present ? present + (b * N + h) * T * dim : nullptr;
          if (!dst) {
            local.resize(static_cast<size_t>(T * dim));
            dst = local.data();
          }
          if (past) std::memcpy(dst, past->data<float>() + (b * N + h) * P * dim, P * dim * sizeof(float));
          GatherRows(src, view.row_stride, L, dim, head_bias, dst + P * dim, dim);
          stride = dim;
          return dst;
        };
        // Bias that need not be materialized: q . bk is the same for every key of a query row, which
        // softmax ignores (unless the raw scores are output), and probabilities sum to one, so V's
        // bias is added to the output rows instead.
        const bool kv_bias = bias_data && !kv_bnsh;
        const bool k_bias = kv_bias && (past_key || present_k || qk_out);
        const bool v_bias_rows = kv_bias && !past_value && !present_v && T > 0;
        int64_t k_stride = 0, v_stride = 0;
        const float* kp = kv_rows(k, past_key, present_k, H, k_bias ? bias_data + D + h * H : nullptr, k_local,
                                  k_stride);
        const float* vp = kv_rows(v, past_value, present_v, Hv,
                                  kv_bias && !v_bias_rows ? bias_data + 2 * D + h * Hv : nullptr, v_local, v_stride);
        ScoreRules rules;
        if (!add_mask.empty()) rules.mask = add_mask.data() + b * S * T;
        // Causal keys are masked anyway; skipping them is exact unless the raw scores are output.
        if (unidirectional_ && S > 1 && !qk_out) rules.causal_offset = P;
        if (attn_bias) {
          rules.bias = attn_bias->data<float>() + b * bias_strides.first + h * bias_strides.second;
          rules.bias_stride = T;
        }
        if (qk_out) rules.scores_out = qk_out + (b * N + h) * S * T;
        float* op = out_data + b * S * Dv + h * Hv;
        AttendHead(qp, q_stride, kp, k_stride, vp, v_stride, op, Dv, S, T, H, Hv, scale, rules, scratch.data());
        if (v_bias_rows) {
          const float* bv = bias_data + 2 * D + h * Hv;
          for (int64_t s = 0; s < S; ++s)
            for (int64_t d = 0; d < Hv; ++d) op[s * Dv + d] += bv[d];
        }
      }
    });
  }

 private:
  int64_t num_heads_;
  bool unidirectional_;
  float scale_;
  float mask_filter_value_;
};

ONYX_REGISTER_KERNEL("CPU", "com.microsoft", "MultiHeadAttention", 1, kOpsetMax, MultiHeadAttention);

}  // namespace
}  // namespace onyx::contrib
