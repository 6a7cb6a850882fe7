#include "providers/cpu/kernels/contrib/attention_core.h"

#include <algorithm>
#include <cstring>

#include "base/type_traits.h"
#include "linalg/gemm.h"
#include "linalg/vector_math.h"
#include "providers/cpu/kernels/contrib/vector_math.h"

namespace onyx::contrib {

void GatherRows(const float* src, int64_t src_stride, int64_t rows, int64_t dim, const float* bias, float* dst,
                int64_t dst_stride) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* s = src + r * src_stride;
    float* d = dst + r * dst_stride;
    if (bias) {
      for (int64_t i = 0; i < dim; ++i) d[i] = s[i] + bias[i];
    } else {
      std::memcpy(d, s, static_cast<size_t>(dim) * sizeof(float));
    }
  }
}

void SoftmaxRow(float* x, int64_t n, bool use_sink, float sink) {
  if (n == 0) return;
  if (!use_sink) {  // the SIMD row kernel (this loop ran at ~5 ns an element: a fifth of ViT's time)
    linalg::SoftmaxRow(x, x, static_cast<size_t>(n));
    return;
  }
  float max = use_sink ? sink : -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i) max = vmath::Max(max, x[i]);
  for (int64_t i = 0; i < n; ++i) x[i] = vmath::Exp(x[i] - max);  // vectorized; the sum is a separate pass
  float sum = use_sink ? vmath::Exp(sink - max) : 0.0f;
  for (int64_t i = 0; i < n; ++i) sum += x[i];
  const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

namespace {
constexpr int64_t kCausalRowBlock = 32;
}  // namespace

void AttendHead(const float* q, int64_t q_stride, const float* k, int64_t k_stride, const float* v, int64_t v_stride,
                float* out, int64_t out_stride, int64_t S, int64_t T, int64_t H, int64_t Hv, float scale,
                const ScoreRules& rules, float* scratch) {
  const int64_t cols = rules.valid_cols >= 0 ? std::min(rules.valid_cols, T) : T;
  if (S == 0 || Hv == 0) return;
  if (cols == 0) {
    for (int64_t s = 0; s < S; ++s) std::fill(out + s * out_stride, out + s * out_stride + Hv, 0.0f);
    return;
  }
  // Causal rows go in blocks: a block only needs the keys its last row can see (and, with a
  // window, none before its first row's window), which halves the work of a prompt.
  const bool causal = rules.causal_offset >= 0;
  const int64_t block = causal ? kCausalRowBlock : S;
  for (int64_t s0 = 0; s0 < S; s0 += block) {
    const int64_t s1 = std::min(S, s0 + block);
    const int64_t c1 = causal ? std::min(cols, rules.causal_offset + s1) : cols;
    int64_t c0 = 0;
    if (causal && rules.window > 0) c0 = std::max<int64_t>(0, std::min(cols, rules.causal_offset + s0 + 1) - rules.window);
    if (c1 > c0)  // scores[s, t] = scale * q[s] . k[t]
      linalg::Sgemm(false, true, s1 - s0, c1 - c0, H, scale, q + s0 * q_stride, q_stride, k + c0 * k_stride, k_stride,
                    0.0f, scratch + s0 * T + c0, T, nullptr);
    for (int64_t s = s0; s < s1; ++s) {
      float* row = scratch + s * T;
      int64_t hi = cols;
      if (causal) hi = std::min(cols, rules.causal_offset + s + 1);
      int64_t lo = 0;
      if (rules.window > 0) lo = std::max<int64_t>(0, hi - rules.window);
      if (hi < lo) hi = lo;
      if (rules.softcap > 0.0f) {
        const float c = rules.softcap, inv = 1.0f / rules.softcap;
        for (int64_t t = lo; t < hi; ++t) row[t] = c * std::tanh(row[t] * inv);
      }
      if (rules.bias) {
        const float* b = rules.bias + s * rules.bias_stride;
        for (int64_t t = lo; t < hi; ++t) row[t] += b[t];
      }
      if (rules.mask) {
        const float* m = rules.mask + s * T;
        for (int64_t t = lo; t < hi; ++t) row[t] += m[t];
      }
      if (rules.scores_out) {
        float* o = rules.scores_out + s * T;
        std::fill(o, o + T, 0.0f);
        std::copy(row + lo, row + hi, o + lo);
      }
      SoftmaxRow(row + lo, hi - lo, rules.use_sink, rules.sink);
      std::fill(row, row + lo, 0.0f);
      std::fill(row + hi, row + T, 0.0f);
      if (rules.probs_out) std::copy(row, row + T, rules.probs_out + s * T);
    }
    // out = probs . v over the block's keys
    if (c1 > c0)
      linalg::Sgemm(false, false, s1 - s0, Hv, c1 - c0, 1.0f, scratch + s0 * T + c0, T, v + c0 * v_stride, v_stride,
                    0.0f, out + s0 * out_stride, out_stride, nullptr);
    else
      for (int64_t s = s0; s < s1; ++s) std::fill(out + s * out_stride, out + s * out_stride + Hv, 0.0f);
  }
}

namespace {

// Mask element values as 0/1 integers (int32, int64 or bool masks).
std::vector<int64_t> MaskValues(KernelContext& ctx, const Tensor& mask, const char* name) {
  std::vector<int64_t> v(static_cast<size_t>(mask.size()));
  if (mask.dtype() == DataType::kInt32) {
    for (int64_t i = 0; i < mask.size(); ++i) v[i] = mask.data<int32_t>()[i];
  } else if (mask.dtype() == DataType::kInt64) {
    for (int64_t i = 0; i < mask.size(); ++i) v[i] = mask.data<int64_t>()[i];
  } else if (mask.dtype() == DataType::kBool) {
    for (int64_t i = 0; i < mask.size(); ++i) v[i] = mask.data<bool>()[i] ? 1 : 0;
  } else {
    ctx.Fail(StrCat("input '", name, "' must be int32, got ", DataTypeName(mask.dtype())));
  }
  return v;
}

}  // namespace

std::vector<float> BuildAdditiveMask(KernelContext& ctx, const Tensor* mask, int64_t batch, int64_t seq,
                                     int64_t past, int64_t total, bool causal, float mask_filter_value,
                                     const char* mask_name) {
  if (mask == nullptr && !causal) return {};
  const Shape& d = mask ? mask->shape() : Shape{};
  if (mask && d.size() == 2 && d[1] == 1 && (d[0] == batch || d[0] == 1)) mask = nullptr;  // broadcast of one value
  if (mask == nullptr && !causal) return {};
  std::vector<int64_t> m;
  if (mask) {
    m = MaskValues(ctx, *mask, mask_name);
    // A 0/1 mask without a 0 (BERT's attention_mask when nothing is padded) masks nothing: no
    // mask to build, and no per-score adds. (The 1-D forms hold positions, not 0/1.)
    const bool zero_one_form = (d.size() == 2 && d[0] == batch && d[1] == total) ||
                               (d.size() == 3 && d[0] == batch && d[1] == seq && d[2] == total) ||
                               (d.size() == 4 && d[0] == batch && d[1] == 1 && d[2] == d[3] && d[2] >= total);
    if (!causal && zero_one_form && std::none_of(m.begin(), m.end(), [](int64_t v) { return v == 0; })) return {};
  }
  std::vector<float> add(static_cast<size_t>(batch * seq * total), 0.0f);
  if (mask) {
    const float f = mask_filter_value;
    auto row = [&](int64_t b, int64_t s) { return add.data() + (b * seq + s) * total; };
    if (d.size() == 1 && (d[0] == batch || d[0] == 2 * batch)) {
      // End positions (right padding), then start positions (left padding) in the 2B form.
      for (int64_t b = 0; b < batch; ++b) {
        const int64_t end = std::clamp<int64_t>(m[b], 0, total);
        const int64_t start = d[0] == 2 * batch ? std::clamp<int64_t>(m[batch + b], 0, total) : 0;
        for (int64_t s = 0; s < seq; ++s) {
          float* r = row(b, s);
          for (int64_t t = 0; t < total; ++t)
            if (t >= end || t < start) r[t] = f;
        }
      }
    } else if (d.size() == 2 && d[0] == batch && d[1] == total) {
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t s = 0; s < seq; ++s) {
          float* r = row(b, s);
          for (int64_t t = 0; t < total; ++t)
            if (m[b * total + t] == 0) r[t] = f;
        }
    } else if (d.size() == 3 && d[0] == batch && d[1] == seq && d[2] == total) {
      for (int64_t i = 0; i < batch * seq * total; ++i)
        if (m[i] == 0) add[i] = f;
    } else if (d.size() == 4 && d[0] == batch && d[1] == 1 && d[2] == d[3] && d[2] >= total) {
      // Megatron form (B, 1, M, M): query s reads row past + s.
      const int64_t max_len = d[3];
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t s = 0; s < seq; ++s) {
          const int64_t* src = m.data() + (b * max_len + past + s) * max_len;
          float* r = row(b, s);
          for (int64_t t = 0; t < total; ++t)
            if (src[t] == 0) r[t] = f;
        }
    } else {
      ctx.Fail(StrCat("input '", mask_name, "' has shape ", ShapeToString(d), "; expected (", batch, "), (",
                      2 * batch, "), (", batch, ", ", total, "), (", batch, ", ", seq, ", ", total, ") or (", batch,
                      ", 1, M, M) with M >= ", total));
    }
  }
  if (causal) {
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t s = 0; s < seq; ++s) {
        float* r = add.data() + (b * seq + s) * total;
        for (int64_t t = past + s + 1; t < total; ++t) r[t] = std::numeric_limits<float>::lowest();
      }
  }
  return add;
}

std::pair<int64_t, int64_t> AttentionBiasStrides(KernelContext& ctx, const Tensor& bias, int64_t batch,
                                                 int64_t heads, int64_t seq, int64_t total) {
  const Shape& d = bias.shape();
  if (d.size() != 4 || (d[0] != batch && d[0] != 1) || (d[1] != heads && d[1] != 1) || d[2] != seq ||
      d[3] != total)
    ctx.Fail(StrCat("input 'attention_bias' has shape ", ShapeToString(d), "; expected (", batch, " or 1, ", heads,
                    " or 1, ", seq, ", ", total, ")"));
  const int64_t head_stride = d[1] == 1 ? 0 : seq * total;
  const int64_t batch_stride = d[0] == 1 ? 0 : d[1] * seq * total;
  return {batch_stride, head_stride};
}

std::vector<float> ToFloatVector(const Tensor& t) {
  std::vector<float> v(static_cast<size_t>(t.size()));
  switch (t.dtype()) {
    case DataType::kFloat:
      std::copy(t.data<float>(), t.data<float>() + t.size(), v.begin());
      break;
    case DataType::kFloat16:
      for (int64_t i = 0; i < t.size(); ++i) v[i] = static_cast<float>(t.data<Float16>()[i]);
      break;
    case DataType::kBFloat16:
      for (int64_t i = 0; i < t.size(); ++i) v[i] = static_cast<float>(t.data<BFloat16>()[i]);
      break;
    default:
      ONYX_THROW(kInvalidArgument, "attention inputs must be float, float16 or bfloat16, got ", DataTypeName(t.dtype()));
  }
  return v;
}

void FromFloat(const float* src, Tensor& dst) {
  switch (dst.dtype()) {
    case DataType::kFloat:
      std::copy(src, src + dst.size(), dst.data<float>());
      break;
    case DataType::kFloat16:
      for (int64_t i = 0; i < dst.size(); ++i) dst.data<Float16>()[i] = Float16(src[i]);
      break;
    case DataType::kBFloat16:
      for (int64_t i = 0; i < dst.size(); ++i) dst.data<BFloat16>()[i] = BFloat16(src[i]);
      break;
    default:
      ONYX_THROW(kInvalidArgument, "attention outputs must be float, float16 or bfloat16, got ", DataTypeName(dst.dtype()));
  }
}

}  // namespace onyx::contrib
