// com.microsoft.GroupQueryAttention: causal attention where kv_num_heads K/V heads serve
// num_heads query heads, with a BNSH KV cache. Inputs: query (B, S, N * H) or packed QKV
// (B, S, (N + 2 N_kv) * H); key/value (B, S, N_kv * H); past_key/past_value (B, N_kv, P, H);
// seqlens_k (B) = total tokens - 1 per sequence; total_sequence_length (scalar); cos/sin caches
// for do_rotary; position_ids (B, S); attention_bias (B|1, N|1, S, T); head_sink (N).
// Per sequence b: total = seqlens_k[b] + 1 and its new tokens start at past = total - S (0 on
// the first prompt, when S == total_sequence_length). present (B, N_kv, max(T, P), H) holds
// the past rows, the new rows at [past, past + S) and zeros after. Query s sees keys
// [0, past + s] (only the last local_window_size + 1 of them when local_window_size > 0).
// Scores: scale * QK', softcap (c * tanh(x / c)), + attention_bias; a head sink (or 0 with
// smooth_softmax) joins the softmax denominator. float and float16 (computed in float).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "platform/thread_pool.h"
#include "providers/cpu/kernels/contrib/attention_core.h"
#include "providers/kernel.h"

namespace onyx::contrib {
namespace {

// A float view of an input: the tensor's own data when it is float, else a widened copy.
struct FloatView {
  std::vector<float> copy;
  const float* data = nullptr;
  explicit FloatView(const Tensor* t) {
    if (!t) return;
    if (t->dtype() == DataType::kFloat) {
      data = t->data<float>();
    } else {
      copy = ToFloatVector(*t);
      data = copy.data();
    }
  }
};

int64_t ScalarInt(KernelContext& ctx, const Tensor& t, const char* name) {
  if (t.size() != 1) ctx.Fail(StrCat("input '", name, "' must hold one value"));
  if (t.dtype() == DataType::kInt32) return t.data<int32_t>()[0];
  if (t.dtype() == DataType::kInt64) return t.data<int64_t>()[0];
  ctx.Fail(StrCat("input '", name, "' must be int32"));
}

class GroupQueryAttention final : public OpKernel {
 public:
  explicit GroupQueryAttention(const KernelInfo& info)
      : num_heads_(info.GetInt("num_heads")),
        kv_num_heads_(info.GetInt("kv_num_heads")),
        scale_(info.GetFloatOr("scale", 0.0f)),
        softcap_(info.GetFloatOr("softcap", 0.0f)),
        local_window_size_(info.GetIntOr("local_window_size", -1)),
        do_rotary_(info.GetIntOr("do_rotary", 0) != 0),
        rotary_interleaved_(info.GetIntOr("rotary_interleaved", 0) != 0),
        smooth_softmax_(info.GetIntOr("smooth_softmax", 0) != 0),
        qk_output_(info.GetIntOr("qk_output", 0)) {
    if (num_heads_ <= 0 || kv_num_heads_ <= 0 || num_heads_ % kv_num_heads_ != 0)
      info.Fail(StrCat("num_heads (", num_heads_, ") must be a positive multiple of kv_num_heads (", kv_num_heads_,
                       ")"));
    if (softcap_ < 0) info.Fail("attribute 'softcap' must be >= 0");
    if (info.GetIntOr("causal", 1) != 1) info.Fail("only causal = 1 is supported");
    if (qk_output_ < 0 || qk_output_ > 2) info.Fail("attribute 'qk_output' must be 0, 1 or 2");
    for (const char* q : {"k_quant_type", "v_quant_type"})
      if (info.GetStringOr(q, "NONE") != "NONE") info.Fail("quantized KV caches are not supported");
    for (size_t i = 12; i < info.num_inputs(); ++i)
      if (info.has_input(i)) info.Fail(StrCat("input ", i, " (KV cache scales / QK norm weights) is not supported"));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& query = ctx.required_input(0);
    const Tensor* key = ctx.input(1);
    const Tensor* value = ctx.input(2);
    const Tensor* past_key = ctx.input(3);
    const Tensor* past_value = ctx.input(4);
    const Tensor& seqlens_k = ctx.required_input(5);
    const Tensor& total_len_t = ctx.required_input(6);
    const Tensor* cos_cache = ctx.input(7);
    const Tensor* sin_cache = ctx.input(8);
    const Tensor* position_ids = ctx.input(9);
    const Tensor* attn_bias = ctx.input(10);
    const Tensor* head_sink = ctx.input(11);
    const DataType dt = query.dtype();
    if (dt != DataType::kFloat && dt != DataType::kFloat16 && dt != DataType::kBFloat16)
      ctx.Fail(StrCat("element type ", DataTypeName(dt), " is not supported"));
    for (const Tensor* t : {key, value, past_key, past_value, cos_cache, sin_cache, attn_bias, head_sink})
      if (t && t->dtype() != dt) ctx.Fail("float inputs must share the query's element type");
    const int64_t N = num_heads_, Nkv = kv_num_heads_, group = N / Nkv;
    if (query.rank() != 3) ctx.Fail("query must be 3-D (B, S, hidden)");
    const int64_t B = query.dim(0), S = query.dim(1);
    const bool packed = key == nullptr;
    if (packed != (value == nullptr)) ctx.Fail("key and value must both be given or both be absent (packed QKV)");
    const int64_t H = packed ? query.dim(2) / (N + 2 * Nkv) : query.dim(2) / N;
    if (H == 0 || (packed ? (N + 2 * Nkv) * H : N * H) != query.dim(2))
      ctx.Fail(StrCat("query hidden size ", query.dim(2), " does not split into heads"));
    if (!packed) {
      for (const Tensor* t : {key, value})
        if (t->rank() != 3 || t->dim(0) != B || t->dim(1) != S || t->dim(2) != Nkv * H)
          ctx.Fail(StrCat("key and value must be (", B, ", ", S, ", ", Nkv * H, ")"));
    }
    int64_t P = 0;  // past buffer length
    if (past_key || past_value) {
      if (!past_key || !past_value) ctx.Fail("past_key and past_value must be given together");
      for (const Tensor* t : {past_key, past_value})
        if (t->rank() != 4 || t->dim(0) != B || t->dim(1) != Nkv || t->dim(3) != H || t->dim(2) != past_key->dim(2))
          ctx.Fail(StrCat("past_key and past_value must be (", B, ", ", Nkv, ", P, ", H, ")"));
      P = past_key->dim(2);
    }
    if (seqlens_k.rank() != 1 || seqlens_k.dim(0) != B || seqlens_k.dtype() != DataType::kInt32)
      ctx.Fail(StrCat("seqlens_k must be int32 of shape (", B, ")"));
    const int64_t total_len = ScalarInt(ctx, total_len_t, "total_sequence_length");
    // More tokens than the cache plus the new ones cannot exist (and would size a huge present).
    if (total_len < 1 || total_len > P + S)
      ctx.Fail(StrCat("total_sequence_length ", total_len, " must be in [1, past length ", P, " + sequence_length ", S,
                      "]"));
    const int64_t Tp = std::max(total_len, P);  // present length
    const bool first_prompt = S == total_len;
    if (!first_prompt && S > 1 && B != 1)
      ctx.Fail("batch_size must be 1 when sequence_length > 1 and past context is given");

    // Per-sequence total and past lengths.
    std::vector<int64_t> totals(B), pasts(B);
    for (int64_t b = 0; b < B; ++b) {
      totals[b] = static_cast<int64_t>(seqlens_k.data<int32_t>()[b]) + 1;
      pasts[b] = first_prompt ? 0 : totals[b] - S;
      if (totals[b] < 1 || totals[b] > total_len || pasts[b] < 0 || pasts[b] > P || pasts[b] + S > Tp)
        ctx.Fail(StrCat("seqlens_k[", b, "] = ", totals[b] - 1, " does not fit sequence_length ", S,
                        ", total_sequence_length ", total_len, " and past length ", P));
    }
    int64_t R = 0;  // rotary dim
    if (do_rotary_) {
      if (!cos_cache || !sin_cache) ctx.Fail("do_rotary needs cos_cache and sin_cache");
      if (cos_cache->rank() != 2 || cos_cache->shape() != sin_cache->shape())
        ctx.Fail("cos_cache and sin_cache must be 2-D of one shape");
      if (cos_cache->dim(0) < total_len)
        ctx.Fail(StrCat("cos_cache has ", cos_cache->dim(0), " positions, fewer than total_sequence_length ", total_len));
      R = 2 * cos_cache->dim(1);
      if (R > H || R == 0) ctx.Fail(StrCat("rotary dimension ", R, " must be in (0, head_size ", H, "]"));
    }
    if (position_ids && (position_ids->dtype() != DataType::kInt64 || position_ids->rank() != 2 ||
                         position_ids->dim(0) != B || position_ids->dim(1) != S))
      ctx.Fail(StrCat("position_ids must be int64 (", B, ", ", S, ")"));
    // Rotary positions: position_ids, or past + s (padding rows of a prompt included).
    std::vector<int64_t> positions;
    if (do_rotary_) {
      positions.resize(static_cast<size_t>(B * S));
      for (int64_t b = 0; b < B; ++b)
        for (int64_t s = 0; s < S; ++s) {
          int64_t p = position_ids ? position_ids->data<int64_t>()[b * S + s]
                                   : pasts[b] + s;
          if (p < 0 || p >= cos_cache->dim(0))
            ctx.Fail(StrCat("rotary position ", p, " is outside the caches' ", cos_cache->dim(0), " positions"));
          positions[b * S + s] = p;
        }
    }
    std::pair<int64_t, int64_t> bias_strides{0, 0};
    if (attn_bias) bias_strides = AttentionBiasStrides(ctx, *attn_bias, B, N, S, total_len);
    if (head_sink && (head_sink->rank() != 1 || head_sink->dim(0) != N))
      ctx.Fail(StrCat("head_sink must be 1-D of size ", N));

    Tensor& out = ctx.AllocateOutput(0, dt, {B, S, N * H});
    Tensor& present_k = ctx.AllocateOutput(1, dt, {B, Nkv, Tp, H});
    Tensor& present_v = ctx.AllocateOutput(2, dt, {B, Nkv, Tp, H});
    Tensor* qk = qk_output_ && ctx.has_output(3) ? &ctx.AllocateOutput(3, dt, {B, N, S, total_len}) : nullptr;

    const FloatView q_in(&query), k_in(key), v_in(value), pk_in(past_key), pv_in(past_value), cos_in(cos_cache),
        sin_in(sin_cache), bias_in(attn_bias), sink_in(head_sink);
    const bool wide = dt != DataType::kFloat;
    std::vector<float> pk_buf, pv_buf, out_buf, qk_buf;
    float* pk = wide ? (pk_buf.resize(present_k.size()), pk_buf.data()) : present_k.data<float>();
    float* pv = wide ? (pv_buf.resize(present_v.size()), pv_buf.data()) : present_v.data<float>();
    float* od = wide ? (out_buf.resize(out.size()), out_buf.data()) : out.data<float>();
    float* qkd = qk ? (wide ? (qk_buf.resize(qk->size()), qk_buf.data()) : qk->data<float>()) : nullptr;

    // Views of the new rows: element (b, head, s, :).
    const int64_t q_row = packed ? (N + 2 * Nkv) * H : N * H;
    const HeadRows qv{q_in.data, S * q_row, H, q_row};
    const HeadRows kv = packed ? HeadRows{q_in.data + N * H, S * q_row, H, q_row}
                               : HeadRows{k_in.data, S * Nkv * H, H, Nkv * H};
    const HeadRows vv = packed ? HeadRows{q_in.data + (N + Nkv) * H, S * q_row, H, q_row}
                               : HeadRows{v_in.data, S * Nkv * H, H, Nkv * H};
    auto rotate_rows = [&](const float* src, int64_t stride, int64_t b, float* dst) {
      for (int64_t s = 0; s < S; ++s) {
        const int64_t p = positions[b * S + s];
        RotateRow(src + s * stride, dst + s * H, cos_in.data + p * (R / 2), sin_in.data + p * (R / 2), R,
                  rotary_interleaved_);
        std::copy(src + s * stride + R, src + s * stride + H, dst + s * H + R);
      }
    };

    // 1. present = past rows, new (rotated) rows, zeros.
    ThreadPool::For(ctx.thread_pool(), B * Nkv, 4.0 * Tp * H, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int64_t b = i / Nkv, h = i % Nkv;
        float* kd = pk + i * Tp * H;
        float* vd = pv + i * Tp * H;
        std::fill(kd, kd + Tp * H, 0.0f);
        std::fill(vd, vd + Tp * H, 0.0f);
        if (P > 0) {
          std::memcpy(kd, pk_in.data + i * P * H, pasts[b] * H * sizeof(float));
          std::memcpy(vd, pv_in.data + i * P * H, pasts[b] * H * sizeof(float));
        }
        float* k_new = kd + pasts[b] * H;
        if (do_rotary_) rotate_rows(kv.At(b, h), kv.row_stride, b, k_new);
        else GatherRows(kv.At(b, h), kv.row_stride, S, H, nullptr, k_new, H);
        GatherRows(vv.At(b, h), vv.row_stride, S, H, nullptr, vd + pasts[b] * H, H);
      }
    });

    // 2. attention per (batch, query head).
    const float scale = scale_ == 0.0f ? 1.0f / std::sqrt(static_cast<float>(H)) : scale_;
    ThreadPool::For(ctx.thread_pool(), B * N, AttendCost(S, Tp, H, H), [&](int64_t begin, int64_t end) {
      std::vector<float> scratch(static_cast<size_t>(S * Tp)), q_local;
      for (int64_t i = begin; i < end; ++i) {
        const int64_t b = i / N, h = i % N, kvh = h / group;
        const float* q = qv.At(b, h);
        int64_t q_stride = qv.row_stride;
        if (do_rotary_) {
          q_local.resize(static_cast<size_t>(S * H));
          rotate_rows(q, q_stride, b, q_local.data());
          q = q_local.data();
          q_stride = H;
        }
        ScoreRules rules;
        rules.valid_cols = totals[b];
        rules.causal_offset = pasts[b];
        if (local_window_size_ > 0) rules.window = local_window_size_;
        rules.softcap = softcap_;
        if (attn_bias) {
          rules.bias = bias_in.data + b * bias_strides.first + h * bias_strides.second;
          rules.bias_stride = total_len;
        }
        if (head_sink || smooth_softmax_) {
          rules.use_sink = true;
          rules.sink = head_sink ? sink_in.data[h] : 0.0f;
        }
        std::vector<float> scores;
        if (qkd) {
          scores.assign(static_cast<size_t>(S * Tp), 0.0f);
          rules.scores_out = qk_output_ == 1 ? scores.data() : nullptr;
          rules.probs_out = qk_output_ == 2 ? scores.data() : nullptr;
        }
        const float* kd = pk + (b * Nkv + kvh) * Tp * H;
        const float* vd = pv + (b * Nkv + kvh) * Tp * H;
        AttendHead(q, q_stride, kd, H, vd, H, od + b * S * N * H + h * H, N * H, S, Tp, H, H, scale, rules,
                   scratch.data());
        if (qkd)
          for (int64_t s = 0; s < S; ++s)
            std::copy(scores.data() + s * Tp, scores.data() + s * Tp + total_len, qkd + (i * S + s) * total_len);
      }
    });
    if (wide) {
      FromFloat(od, out);
      FromFloat(pk, present_k);
      FromFloat(pv, present_v);
      if (qk) FromFloat(qkd, *qk);
    }
  }

 private:
  int64_t num_heads_, kv_num_heads_;
  float scale_, softcap_;
  int64_t local_window_size_;
  bool do_rotary_, rotary_interleaved_, smooth_softmax_;
  int64_t qk_output_;
};

ONYX_REGISTER_KERNEL("CPU", "com.microsoft", "GroupQueryAttention", 1, kOpsetMax, GroupQueryAttention);

}  // namespace
}  // namespace onyx::contrib
