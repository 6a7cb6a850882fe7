// Shared pieces of the com.microsoft attention kernels (Attention, MultiHeadAttention,
// GroupQueryAttention): strided per-head views, the additive mask ONNX Runtime builds from
// mask_index / key_padding_mask, rotary embedding, and the per-head attend step
// (scores = scale * Q K' + bias + mask, softmax, probs V) on linalg::Sgemm.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "providers/kernel.h"

namespace onyx::contrib {

// Element (b, h, row, d) of a [batch, heads, rows, dim] tensor stored with arbitrary strides
// (BSNH, BNSH and packed QKV layouts are all of this form).
struct HeadRows {
  const float* base = nullptr;
  int64_t batch_stride = 0;
  int64_t head_stride = 0;
  int64_t row_stride = 0;
  const float* At(int64_t b, int64_t h) const { return base + b * batch_stride + h * head_stride; }
  explicit operator bool() const { return base != nullptr; }
};

// Rows [0, rows) of one head copied to a dense [rows, dim] block, adding `bias` (dim values) when given.
void GatherRows(const float* src, int64_t src_stride, int64_t rows, int64_t dim, const float* bias, float* dst,
                int64_t dst_stride);

// How the rows of one head's score matrix [S, T] are limited and adjusted before softmax.
struct ScoreRules {
  const float* mask = nullptr;   // additive [S, T] (stride T) or null
  const float* bias = nullptr;   // additive [S, T] (stride bias_stride) or null
  int64_t bias_stride = 0;
  float softcap = 0.0f;          // > 0: x = softcap * tanh(x / softcap) before bias and mask
  // Columns of row s are [lo(s), hi(s)): hi = causal_offset + s + 1 when causal_offset >= 0
  // (clamped to valid_cols), lo = hi - window when window > 0. Others get probability 0.
  int64_t causal_offset = -1;
  int64_t window = -1;
  int64_t valid_cols = -1;        // < 0: all T columns
  bool use_sink = false;          // an extra logit `sink` joins the softmax denominator only
  float sink = 0.0f;
  float* scores_out = nullptr;    // when set: the [S, T] scores before softmax are copied here
  float* probs_out = nullptr;     // when set: the [S, T] probabilities are copied here
};

// out[s, :] = softmax(scale * q[s] . k[t] (+ rules)) . v[t] for one head. scratch holds S * T floats.
void AttendHead(const float* q, int64_t q_stride, const float* k, int64_t k_stride, const float* v, int64_t v_stride,
                float* out, int64_t out_stride, int64_t S, int64_t T, int64_t H, int64_t Hv, float scale,
                const ScoreRules& rules, float* scratch);

// Softmax of x[0, n) in place; a sink logit (when use_sink) joins only the denominator.
void SoftmaxRow(float* x, int64_t n, bool use_sink, float sink);

// Mask forms of Attention's mask_index and MultiHeadAttention's key_padding_mask.
// Returns the additive [B, S, T] mask: mask_filter_value where masked and the lowest float on
// causal positions (as ONNX Runtime's CPU kernels), or an empty vector when nothing is masked.
// Throws via ctx.Fail on a bad shape.
std::vector<float> BuildAdditiveMask(KernelContext& ctx, const Tensor* mask, int64_t batch, int64_t seq,
                                     int64_t past, int64_t total, bool causal, float mask_filter_value,
                                     const char* mask_name);

// Checks attention_bias (B or 1, N or 1, S, T); returns its (batch stride, head stride) in elements.
std::pair<int64_t, int64_t> AttentionBiasStrides(KernelContext& ctx, const Tensor& bias, int64_t batch,
                                                 int64_t heads, int64_t seq, int64_t total);

// Rotary embedding of one row x[0, rotary_dim) into y with cos/sin rows of rotary_dim / 2 values.
// Interleaved pairs are (x[2i], x[2i+1]); otherwise (x[i], x[i + rotary_dim / 2]).
inline void RotateRow(const float* x, float* y, const float* cos_row, const float* sin_row, int64_t rotary_dim,
                      bool interleaved) {
  const int64_t half = rotary_dim / 2;
  if (interleaved) {
    for (int64_t i = 0; i < half; ++i) {
      const float a = x[2 * i], b = x[2 * i + 1], c = cos_row[i], s = sin_row[i];
      y[2 * i] = a * c - b * s;
      y[2 * i + 1] = a * s + b * c;
    }
  } else {
    for (int64_t i = 0; i < half; ++i) {
      const float a = x[i], b = x[i + half], c = cos_row[i], s = sin_row[i];
      y[i] = a * c - b * s;
      y[i + half] = a * s + b * c;
    }
  }
}

// Per-(batch, head) cost hint for the thread pool.
inline double AttendCost(int64_t S, int64_t T, int64_t H, int64_t Hv) {
  return static_cast<double>(S) * static_cast<double>(T) * static_cast<double>(H + Hv + 8);
}

// Float copies of a float16/bfloat16/float tensor's values (float input: a plain copy).
std::vector<float> ToFloatVector(const Tensor& t);
// Writes float values into a tensor of dtype float, float16 or bfloat16.
void FromFloat(const float* src, Tensor& dst);

}  // namespace onyx::contrib
