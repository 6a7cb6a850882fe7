// Depthwise convolution kernels written once against `Vec` (see simd_<isa>.h):
//   DepthwisePlane    one NCHW channel plane, vectorized over the output width. With stride 1
//                     or 2 along the width every tap is an unaligned load from the input row
//                     (stride 2: two, keeping the even lanes; masked at the edges); larger
//                     strides first copy the plane into zero-padded rows split into stride_w
//                     column phases, so taps are again plain vector loads.
//   DepthwiseBlocked  one NCHWc channel block, vectorized over the B channels.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>

#include "linalg/f32_conv_kernel.h"
#include "linalg/f32_conv_math_impl.h"

namespace onyx::linalg::ONYX_SIMD_NS {

namespace dw {

inline void Fill(float* p, int64_t n, float v) {
  for (int64_t i = 0; i < n; ++i) p[i] = v;
}

// Padded, phase-split copy of the plane: phase q, row r holds input row r - pad_top at columns
// j * stride_w + q - pad_left (zero outside the input).
inline void PreparePlane(const DepthwisePlaneArgs& a, const DepthwisePlaneLayout& l, float* s) {
  constexpr int B = Vec::kWidth;
  const int64_t sw = a.stride_w, cols = l.cols, wide = sw * cols;
  float* row_buf = s + sw * l.rows * cols;  // one padded input row before the phase split
  for (int64_t r = 0; r < l.rows; ++r) {
    const int64_t ih = r - a.pad_top;
    if (ih < 0 || ih >= a.in_h) {
      for (int64_t q = 0; q < sw; ++q) Fill(s + (q * l.rows + r) * cols, cols, 0.0f);
      continue;
    }
    const float* xr = a.x + ih * a.in_w;
    float* t = sw == 1 ? s + r * cols : row_buf;
    // t[j] = x[j - pad_left] inside the input, 0 outside.
    const int64_t lo = a.pad_left < wide ? a.pad_left : wide;
    const int64_t hi = a.pad_left + a.in_w < wide ? a.pad_left + a.in_w : wide;
    Fill(t, lo, 0.0f);
    for (int64_t j = lo; j < hi; ++j) t[j] = xr[j - a.pad_left];
    Fill(t + (hi > lo ? hi : lo), wide - (hi > lo ? hi : lo), 0.0f);
    if (sw == 1) continue;
    if (sw == 2) {
      float* even = s + r * cols;
      float* odd = s + (l.rows + r) * cols;
      for (int64_t j = 0; j < cols; j += B) {  // cols is a multiple of B
        Vec e, o;
        Vec::Deinterleave2(t + 2 * j, e, o);
        Vec::Store(even + j, e);
        Vec::Store(odd + j, o);
      }
      continue;
    }
    for (int64_t q = 0; q < sw; ++q) {
      float* ph = s + (q * l.rows + r) * cols;
      for (int64_t j = 0; j < cols; ++j) ph[j] = t[j * sw + q];
    }
  }
}

// NV vectors of one output row. K > 0: a K x K kernel with its weights in registers.
template <int K, int NV>
inline void PlaneRowChunk(const DepthwisePlaneArgs& a, const DepthwisePlaneLayout& l, const float* s,
                          const Vec* wk, int64_t oh, int64_t ow0, bool has_act) {
  constexpr int B = Vec::kWidth;
  const int64_t kh_n = K > 0 ? K : a.kernel_h, kw_n = K > 0 ? K : a.kernel_w;
  const int64_t sw = a.stride_w, plane = l.rows * l.cols;
  Vec acc[NV];
  const Vec b = Vec::Set1(a.bias);
#pragma GCC unroll 4
  for (int i = 0; i < NV; ++i) acc[i] = b;
  for (int64_t kh = 0; kh < kh_n; ++kh) {
    const float* row = s + (oh * a.stride_h + kh * a.dilation_h) * l.cols + ow0;
#pragma GCC unroll 5
    for (int64_t kw = 0; kw < kw_n; ++kw) {
      const int64_t off = kw * a.dilation_w;
      const float* src = row + (off % sw) * plane + off / sw;
      const Vec wv = K > 0 ? wk[kh * K + kw] : Vec::Set1(a.w[kh * kw_n + kw]);
#pragma GCC unroll 4
      for (int i = 0; i < NV; ++i) acc[i] = Vec::Fma(wv, Vec::Load(src + i * B), acc[i]);
    }
  }
#pragma GCC unroll 4
  for (int i = 0; i < NV; ++i) {
    const int64_t ow = ow0 + i * B;
    const int64_t n = a.out_w - ow < B ? a.out_w - ow : B;
    if (n <= 0) break;
    Vec v = acc[i];
    if (a.residual != nullptr) {
      const float* res = a.residual + oh * a.out_w + ow;
      v = Vec::Add(v, n == B ? Vec::Load(res) : Vec::LoadPartial(res, n));
    }
    if (has_act) v = Activate(v, *a.act);
    float* d = a.y + oh * a.out_w + ow;
    if (n == B) Vec::Store(d, v);
    else Vec::StorePartial(d, v, n);
  }
}

// Stride SW (1 or 2) along the width: NV vectors of NR output rows straight from the input rows
// (stride 2 loads twice the width and keeps the even lanes). `masks` (MASKED: vectors whose
// taps reach the padding) holds per vector and kernel column the lanes inside the row (SW masks,
// one per loaded vector); the others read as zero. With NR > 1 (stride 1 and dilation 1 down
// the column) each loaded input row feeds every output row it overlaps, and the NR x NV
// accumulators are independent FMA chains.
template <int K, int SW, int NR, int NV, bool MASKED>
inline void DirectRowChunk(const DepthwisePlaneArgs& a, const Vec* wk, int64_t oh0, int64_t ow0,
                           const typename Vec::LaneMask* masks, bool has_act) {
  constexpr int B = Vec::kWidth;
  const int64_t kh_n = K > 0 ? K : a.kernel_h, kw_n = K > 0 ? K : a.kernel_w;
  // A fixed kernel width keeps its edge masks in registers for the whole chunk.
  typename Vec::LaneMask m[MASKED && K > 0 ? NV * K * SW : 1];
  if constexpr (MASKED && K > 0)
    for (int i = 0; i < NV * K * SW; ++i) m[i] = masks[i];
  const typename Vec::LaneMask* mk = MASKED && K > 0 ? m : masks;
  Vec acc[NR][NV];
  const Vec b = Vec::Set1(a.bias);
#pragma GCC unroll 4
  for (int j = 0; j < NR; ++j)
#pragma GCC unroll 4
    for (int i = 0; i < NV; ++i) acc[j][i] = b;
  // NR == 1: input row t of the window is kernel row t (any stride / dilation down the column).
  // NR > 1: input rows oh0 - pad_top + t, kernel row t - j for output row oh0 + j.
  const int64_t rows = NR == 1 ? kh_n : kh_n + NR - 1;
#pragma GCC unroll 8
  for (int64_t t = 0; t < rows; ++t) {
    const int64_t ih = NR == 1 ? oh0 * a.stride_h - a.pad_top + t * a.dilation_h : oh0 - a.pad_top + t;
    if (ih < 0 || ih >= a.in_h) continue;
    const float* row = a.x + ih * a.in_w;
#pragma GCC unroll 5
    for (int64_t kw = 0; kw < kw_n; ++kw) {
      const int64_t c0 = SW * ow0 - a.pad_left + kw * a.dilation_w;
#pragma GCC unroll 4
      for (int i = 0; i < NV; ++i) {
        const float* p = row + (c0 + i * SW * B);
        Vec v;
        if constexpr (SW == 1) {
          v = MASKED ? Vec::LoadMasked(p, mk[i * kw_n + kw]) : Vec::Load(p);
        } else {
          v = MASKED ? Vec::LoadEvenMasked(p, mk[(i * kw_n + kw) * 2], mk[(i * kw_n + kw) * 2 + 1]) : Vec::LoadEven(p);
        }
#pragma GCC unroll 4
        for (int j = 0; j < NR; ++j) {
          const int64_t kh = t - j;
          if (kh < 0 || kh >= kh_n) continue;
          const Vec wv = K > 0 ? wk[kh * K + kw] : Vec::Set1(a.w[kh * kw_n + kw]);
          acc[j][i] = Vec::Fma(wv, v, acc[j][i]);
        }
      }
    }
  }
#pragma GCC unroll 4
  for (int j = 0; j < NR; ++j) {
    const int64_t oh = oh0 + j;
#pragma GCC unroll 4
    for (int i = 0; i < NV; ++i) {
      const int64_t ow = ow0 + i * B;
      const int64_t n = a.out_w - ow < B ? a.out_w - ow : B;
      if (n <= 0) break;
      Vec v = acc[j][i];
      if (a.residual != nullptr) {
        const float* res = a.residual + oh * a.out_w + ow;
        v = Vec::Add(v, n == B ? Vec::Load(res) : Vec::LoadPartial(res, n));
      }
      if (has_act) v = Activate(v, *a.act);
      float* d = a.y + oh * a.out_w + ow;
      if (n == B) Vec::Store(d, v);
      else Vec::StorePartial(d, v, n);
    }
  }
}

// One block of NR output rows: edge vectors one at a time (masked), interior ones NV at a time.
template <int K, int SW, int NR, int NV>
inline void DirectRowBlock(const DepthwisePlaneArgs& a, const Vec* wk, int64_t oh0, int64_t lo, int64_t hi,
                           int64_t vectors, const typename Vec::LaneMask* mask_buf, int64_t masks_per_vector,
                           bool has_act) {
  constexpr int B = Vec::kWidth;
  auto masks_of = [&](int64_t v) { return mask_buf + (v < lo ? v : lo + v - hi) * masks_per_vector; };
  for (int64_t v = 0; v < lo; ++v) DirectRowChunk<K, SW, NR, 1, true>(a, wk, oh0, v * B, masks_of(v), has_act);
  int64_t v = lo;
  for (; v + NV <= hi; v += NV) DirectRowChunk<K, SW, NR, NV, false>(a, wk, oh0, v * B, nullptr, has_act);
  for (; v < hi; ++v) DirectRowChunk<K, SW, NR, 1, false>(a, wk, oh0, v * B, nullptr, has_act);
  for (v = hi; v < vectors; ++v) DirectRowChunk<K, SW, NR, 1, true>(a, wk, oh0, v * B, masks_of(v), has_act);
}

// Vectors [0, lo) and [hi, vectors) of each row touch the padding; [lo, hi) never do.
template <int K, int SW>
inline void DirectRows(const DepthwisePlaneArgs& a, typename Vec::LaneMask* mask_buf) {
  constexpr int B = Vec::kWidth;
  Vec wk[K > 0 ? K * K : 1];
  if constexpr (K > 0)
    for (int i = 0; i < K * K; ++i) wk[i] = Vec::Set1(a.w[i]);
  const bool has_act = HasActivation(a.act);
  const int64_t vectors = (a.out_w + B - 1) / B;
  const int64_t kw_n = a.kernel_w, span = (kw_n - 1) * a.dilation_w;
  constexpr int64_t W = SW * B;  // input floats a vector loads
  const int64_t lo = (a.pad_left + W - 1) / W < vectors ? (a.pad_left + W - 1) / W : vectors;
  int64_t hi = a.in_w - span + a.pad_left < 0 ? 0 : (a.in_w - span + a.pad_left) / W;
  hi = hi < lo ? lo : hi > vectors ? vectors : hi;
  auto masks_of = [&](int64_t v) { return mask_buf + (v < lo ? v : lo + v - hi) * kw_n * SW; };
  for (int64_t v = 0; v < vectors; ++v) {  // lane masks of the edge vectors, per kernel column
    if (v == lo) v = hi;
    if (v >= vectors) break;
    for (int64_t kw = 0; kw < kw_n; ++kw)
      for (int64_t h = 0; h < SW; ++h) {  // each loaded vector of the tap
        const int64_t c = SW * v * B - a.pad_left + kw * a.dilation_w + h * B;
        int64_t l = c < 0 ? -c : 0, e = a.in_w - c < B ? a.in_w - c : B;
        if (l > B) l = B;
        if (e < l) e = l;
        masks_of(v)[kw * SW + h] = Vec::RangeMask(l, e);
      }
  }
  // Two output rows at a time when consecutive output rows read consecutive input rows.
  int64_t oh = 0;
  if (K > 0 && a.stride_h == 1 && a.dilation_h == 1)
    for (; oh + 2 <= a.out_h; oh += 2)
      DirectRowBlock<K, SW, 2, 2>(a, wk, oh, lo, hi, vectors, mask_buf, kw_n * SW, has_act);
  for (; oh < a.out_h; ++oh) DirectRowBlock<K, SW, 1, 4>(a, wk, oh, lo, hi, vectors, mask_buf, kw_n * SW, has_act);
}

template <int K>
inline void PlaneRows(const DepthwisePlaneArgs& a, const DepthwisePlaneLayout& l, const float* s) {
  constexpr int B = Vec::kWidth;
  Vec wk[K > 0 ? K * K : 1];
  if constexpr (K > 0)
    for (int i = 0; i < K * K; ++i) wk[i] = Vec::Set1(a.w[i]);
  const bool has_act = HasActivation(a.act);
  const int64_t vectors = (a.out_w + B - 1) / B;
  for (int64_t oh = 0; oh < a.out_h; ++oh) {
    int64_t v = 0;
    for (; v + 4 <= vectors; v += 4) PlaneRowChunk<K, 4>(a, l, s, wk, oh, v * B, has_act);
    switch (vectors - v) {
      case 3: PlaneRowChunk<K, 3>(a, l, s, wk, oh, v * B, has_act); break;
      case 2: PlaneRowChunk<K, 2>(a, l, s, wk, oh, v * B, has_act); break;
      case 1: PlaneRowChunk<K, 1>(a, l, s, wk, oh, v * B, has_act); break;
      default: break;
    }
  }
}

}  // namespace dw

void DepthwisePlane(const DepthwisePlaneArgs& a) {
  if (a.stride_w <= 2) {
    // Edge-vector lane masks live in the scratch (DepthwisePlaneLayout::Floats reserves them).
    const uintptr_t aligned = (reinterpret_cast<uintptr_t>(a.scratch) + 31) & ~uintptr_t{31};
    auto* masks = reinterpret_cast<typename Vec::LaneMask*>(aligned);
    const int k = a.kernel_h == a.kernel_w && (a.kernel_w == 3 || a.kernel_w == 5) ? static_cast<int>(a.kernel_w) : 0;
    if (a.stride_w == 1) {
      if (k == 3) dw::DirectRows<3, 1>(a, masks);
      else if (k == 5) dw::DirectRows<5, 1>(a, masks);
      else dw::DirectRows<0, 1>(a, masks);
    } else {
      if (k == 3) dw::DirectRows<3, 2>(a, masks);
      else if (k == 5) dw::DirectRows<5, 2>(a, masks);
      else dw::DirectRows<0, 2>(a, masks);
    }
    return;
  }
  const DepthwisePlaneLayout l = GetDepthwisePlaneLayout(a, Vec::kWidth);
  dw::PreparePlane(a, l, a.scratch);
  if (a.kernel_h == 3 && a.kernel_w == 3) dw::PlaneRows<3>(a, l, a.scratch);
  else if (a.kernel_h == 5 && a.kernel_w == 5) dw::PlaneRows<5>(a, l, a.scratch);
  else dw::PlaneRows<0>(a, l, a.scratch);
}

namespace dw {

// Output pixels per register tile of the blocked kernel: T accumulators, KW weights of one
// window row and the input vector being read stay in registers (T + KW + 1 <= 16 for AVX2).
template <int KW>
constexpr int kBlockedTilePixels = KW <= 5 ? 8 : 6;

// T output pixels of one row from ow (KW-wide window, unit dilation along the row, stride S).
// Each input vector of a window row is loaded once and feeds every pixel whose window covers
// it, instead of once per tap. kEdge: some of those columns lie outside the input (padding, or
// pixels past out_w, not stored) and are skipped. Stores the first n pixels.
template <int KW, int S, int T, bool kEdge>
inline void BlockedTile(const DepthwiseBlockedArgs& a, Vec bias, bool has_act, int64_t oh, int64_t ow, int64_t n) {
  constexpr int B = Vec::kWidth;
  constexpr int kCols = (T - 1) * S + KW;
  Vec acc[T];
#pragma GCC unroll 16
  for (int i = 0; i < T; ++i) acc[i] = bias;
  const int64_t ih0 = oh * a.stride_h - a.pad_top, iw0 = ow * S - a.pad_left;
  for (int64_t kh = 0; kh < a.kernel_h; ++kh) {
    const int64_t ih = ih0 + kh * a.dilation_h;
    if (ih < 0 || ih >= a.in_h) continue;
    const float* xr = a.x + (ih * a.in_w + iw0) * B;
    Vec w[KW];
#pragma GCC unroll 8
    for (int kw = 0; kw < KW; ++kw) w[kw] = Vec::Load(a.w + (kh * KW + kw) * B);
    [&]<int... J>(std::integer_sequence<int, J...>) __attribute__((always_inline)) {
      (
          [&]() __attribute__((always_inline)) {
            constexpr int j = J;
            if (kEdge && (iw0 + j < 0 || iw0 + j >= a.in_w)) return;
            const Vec xv = Vec::Load(xr + j * B);
            [&]<int... K>(std::integer_sequence<int, K...>) __attribute__((always_inline)) {
              (
                  [&]() __attribute__((always_inline)) {
                    constexpr int d = j - K;
                    if constexpr (d >= 0 && d % S == 0 && d / S < T) acc[d / S] = Vec::Fma(w[K], xv, acc[d / S]);
                  }(),
                  ...);
            }(std::make_integer_sequence<int, KW>{});
          }(),
          ...);
    }(std::make_integer_sequence<int, kCols>{});
  }
#pragma GCC unroll 16
  for (int i = 0; i < T; ++i) {
    if (kEdge && i >= n) break;
    const int64_t off = ((oh - a.y_row0) * a.out_w + ow + i) * B;
    Vec v = acc[i];
    if (a.residual != nullptr) v = Vec::Add(v, Vec::Load(a.residual + off));
    if (has_act) v = Activate(v, *a.act);
    Vec::Store(a.y + off, v);
  }
}

template <int KW, int S>
void BlockedRows(const DepthwiseBlockedArgs& a, Vec bias, bool has_act) {
  constexpr int T = kBlockedTilePixels<KW>;
  // A costly activation (SiLU, Sigmoid, ...) runs over each finished row while it is in L1, in
  // one loop with the kind picked once: a call per vector inside the tile spilled its
  // accumulators around every call (EfficientNet's SiLU depthwise layers ran at half speed).
  const bool row_act = has_act && !IsInlineActivation(a.act->kind);
  if (row_act) has_act = false;
  // Output columns whose whole window row lies inside the input.
  const int64_t ow_lo = (a.pad_left + S - 1) / S;
  const int64_t last = a.in_w - KW + a.pad_left;  // the last interior pixel is last / S
  const int64_t ow_hi = last < 0 ? 0 : std::min<int64_t>(a.out_w, last / S + 1);
  for (int64_t oh = a.oh_begin; oh < a.oh_end; ++oh) {
    for (int64_t ow = 0; ow < a.out_w; ow += T) {
      if (ow >= ow_lo && ow + T <= ow_hi) BlockedTile<KW, S, T, false>(a, bias, has_act, oh, ow, T);
      else BlockedTile<KW, S, T, true>(a, bias, has_act, oh, ow, std::min<int64_t>(T, a.out_w - ow));
    }
    if (row_act) ActivateVectors(a.y + (oh - a.y_row0) * a.out_w * Vec::kWidth, a.out_w, Vec::kWidth, *a.act);
  }
}

}  // namespace dw

void DepthwiseBlocked(const DepthwiseBlockedArgs& a) {
  constexpr int B = Vec::kWidth;
  const bool has_act = HasActivation(a.act);
  const Vec bias = a.bias != nullptr ? Vec::Load(a.bias) : Vec::Zero();
  if (a.dilation_w == 1 && (a.stride_w == 1 || a.stride_w == 2)) {
    const bool s1 = a.stride_w == 1;
    switch (a.kernel_w) {
      case 3: return s1 ? dw::BlockedRows<3, 1>(a, bias, has_act) : dw::BlockedRows<3, 2>(a, bias, has_act);
      case 5: return s1 ? dw::BlockedRows<5, 1>(a, bias, has_act) : dw::BlockedRows<5, 2>(a, bias, has_act);
      case 7: return s1 ? dw::BlockedRows<7, 1>(a, bias, has_act) : dw::BlockedRows<7, 2>(a, bias, has_act);
      default: break;
    }
  }
  const int64_t kw_n = a.kernel_w;
  // Output columns whose whole window row lies inside the input.
  int64_t ow_lo = (a.pad_left + a.stride_w - 1) / a.stride_w;
  int64_t ow_hi = a.in_w - (kw_n - 1) * a.dilation_w + a.pad_left - 1;
  ow_hi = ow_hi < 0 ? 0 : ow_hi / a.stride_w + 1;
  if (ow_hi > a.out_w) ow_hi = a.out_w;
  if (ow_lo > ow_hi) ow_lo = ow_hi;
  auto finish = [&](Vec v, int64_t oh, int64_t ow) {
    const int64_t off = ((oh - a.y_row0) * a.out_w + ow) * B;
    if (a.residual != nullptr) v = Vec::Add(v, Vec::Load(a.residual + off));
    if (has_act) v = Activate(v, *a.act);
    Vec::Store(a.y + off, v);
  };
  for (int64_t oh = a.oh_begin; oh < a.oh_end; ++oh) {
    const int64_t ih0 = oh * a.stride_h - a.pad_top;
    auto single = [&](int64_t ow) {
      const int64_t iw0 = ow * a.stride_w - a.pad_left;
      Vec acc = bias;
      for (int64_t kh = 0; kh < a.kernel_h; ++kh) {
        const int64_t ih = ih0 + kh * a.dilation_h;
        if (ih < 0 || ih >= a.in_h) continue;
        for (int64_t kw = 0; kw < kw_n; ++kw) {
          const int64_t iw = iw0 + kw * a.dilation_w;
          if (iw < 0 || iw >= a.in_w) continue;
          acc = Vec::Fma(Vec::Load(a.w + (kh * kw_n + kw) * B), Vec::Load(a.x + (ih * a.in_w + iw) * B), acc);
        }
      }
      finish(acc, oh, ow);
    };
    for (int64_t ow = 0; ow < ow_lo; ++ow) single(ow);
    int64_t ow = ow_lo;
    for (; ow + 4 <= ow_hi; ow += 4) {  // four interior pixels: independent accumulators
      Vec acc[4] = {bias, bias, bias, bias};
      const int64_t iw0 = ow * a.stride_w - a.pad_left;
      for (int64_t kh = 0; kh < a.kernel_h; ++kh) {
        const int64_t ih = ih0 + kh * a.dilation_h;
        if (ih < 0 || ih >= a.in_h) continue;
        const float* xr = a.x + (ih * a.in_w + iw0) * B;
        for (int64_t kw = 0; kw < kw_n; ++kw) {
          const Vec wv = Vec::Load(a.w + (kh * kw_n + kw) * B);
          const float* xp = xr + kw * a.dilation_w * B;
#pragma GCC unroll 4
          for (int i = 0; i < 4; ++i) acc[i] = Vec::Fma(wv, Vec::Load(xp + i * a.stride_w * B), acc[i]);
        }
      }
      for (int i = 0; i < 4; ++i) finish(acc[i], oh, ow + i);
    }
    for (; ow < a.out_w; ++ow) single(ow);
  }
}

}  // namespace onyx::linalg::ONYX_SIMD_NS
