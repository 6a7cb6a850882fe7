// Depthwise convolution kernels written once against `Vec` (see simd_<isa>.h):
//   DepthwisePlane    one NCHW channel plane, vectorized over the output width. With stride 1
//                     along the width every tap is an unaligned load from the input row (masked
//                     at the edges); larger strides first copy the plane into zero-padded rows
//                     split into stride_w column phases, so taps are again plain vector loads.
//   DepthwiseBlocked  one NCHWc channel block, vectorized over the B channels.
#pragma once

#include <cstdint>
#include <cstring>

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

// Stride 1 along the width: NV vectors of one output row straight from the input rows.
// `masks` (null for interior vectors, whose taps all lie inside the row) holds per vector and
// kernel column the lanes that fall inside the row; the others read as zero padding.
template <int K, int NV>
inline void DirectRowChunk(const DepthwisePlaneArgs& a, const Vec* wk, int64_t oh, int64_t ow0,
                           const typename Vec::LaneMask* masks, bool has_act) {
  constexpr int B = Vec::kWidth;
  const int64_t kh_n = K > 0 ? K : a.kernel_h, kw_n = K > 0 ? K : a.kernel_w;
  Vec acc[NV];
  const Vec b = Vec::Set1(a.bias);
#pragma GCC unroll 4
  for (int i = 0; i < NV; ++i) acc[i] = b;
  const int64_t ih0 = oh * a.stride_h - a.pad_top;
  for (int64_t kh = 0; kh < kh_n; ++kh) {
    const int64_t ih = ih0 + kh * a.dilation_h;
    if (ih < 0 || ih >= a.in_h) continue;
    const float* row = a.x + ih * a.in_w;
#pragma GCC unroll 5
    for (int64_t kw = 0; kw < kw_n; ++kw) {
      const int64_t c0 = ow0 - a.pad_left + kw * a.dilation_w;
      const Vec wv = K > 0 ? wk[kh * K + kw] : Vec::Set1(a.w[kh * kw_n + kw]);
#pragma GCC unroll 4
      for (int i = 0; i < NV; ++i) {
        const float* p = row + (c0 + i * B);
        acc[i] = Vec::Fma(wv, masks == nullptr ? Vec::Load(p) : Vec::LoadMasked(p, masks[i * kw_n + kw]), acc[i]);
      }
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

// Vectors [0, lo) and [hi, vectors) of each row touch the padding; [lo, hi) never do.
template <int K>
inline void DirectRows(const DepthwisePlaneArgs& a, typename Vec::LaneMask* mask_buf) {
  constexpr int B = Vec::kWidth;
  Vec wk[K > 0 ? K * K : 1];
  if constexpr (K > 0)
    for (int i = 0; i < K * K; ++i) wk[i] = Vec::Set1(a.w[i]);
  const bool has_act = HasActivation(a.act);
  const int64_t vectors = (a.out_w + B - 1) / B;
  const int64_t kw_n = a.kernel_w, span = (kw_n - 1) * a.dilation_w;
  const int64_t lo = (a.pad_left + B - 1) / B < vectors ? (a.pad_left + B - 1) / B : vectors;
  int64_t hi = a.in_w - span + a.pad_left < 0 ? 0 : (a.in_w - span + a.pad_left) / B;
  hi = hi < lo ? lo : hi > vectors ? vectors : hi;
  // Lane masks of the edge vectors, per kernel column.
  auto masks_of = [&](int64_t v) {
    typename Vec::LaneMask* m = mask_buf + (v < lo ? v : lo + v - hi) * kw_n;
    return m;
  };
  for (int64_t v = 0; v < vectors; ++v) {
    if (v == lo) v = hi;
    if (v >= vectors) break;
    for (int64_t kw = 0; kw < kw_n; ++kw) {
      const int64_t c = v * B - a.pad_left + kw * a.dilation_w;
      int64_t l = c < 0 ? -c : 0, h = a.in_w - c < B ? a.in_w - c : B;
      if (l > B) l = B;
      if (h < l) h = l;
      masks_of(v)[kw] = Vec::RangeMask(l, h);
    }
  }
  for (int64_t oh = 0; oh < a.out_h; ++oh) {
    for (int64_t v = 0; v < lo; ++v) DirectRowChunk<K, 1>(a, wk, oh, v * B, masks_of(v), has_act);
    int64_t v = lo;
    for (; v + 4 <= hi; v += 4) DirectRowChunk<K, 4>(a, wk, oh, v * B, nullptr, has_act);
    switch (hi - v) {
      case 3: DirectRowChunk<K, 3>(a, wk, oh, v * B, nullptr, has_act); break;
      case 2: DirectRowChunk<K, 2>(a, wk, oh, v * B, nullptr, has_act); break;
      case 1: DirectRowChunk<K, 1>(a, wk, oh, v * B, nullptr, has_act); break;
      default: break;
    }
    for (v = hi; v < vectors; ++v) DirectRowChunk<K, 1>(a, wk, oh, v * B, masks_of(v), has_act);
  }
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
  if (a.stride_w == 1) {
    // Edge-vector lane masks live in the scratch (DepthwisePlaneLayout::Floats reserves them).
    const uintptr_t aligned = (reinterpret_cast<uintptr_t>(a.scratch) + 31) & ~uintptr_t{31};
    auto* masks = reinterpret_cast<typename Vec::LaneMask*>(aligned);
    if (a.kernel_h == 3 && a.kernel_w == 3) dw::DirectRows<3>(a, masks);
    else if (a.kernel_h == 5 && a.kernel_w == 5) dw::DirectRows<5>(a, masks);
    else dw::DirectRows<0>(a, masks);
    return;
  }
  const DepthwisePlaneLayout l = GetDepthwisePlaneLayout(a, Vec::kWidth);
  dw::PreparePlane(a, l, a.scratch);
  if (a.kernel_h == 3 && a.kernel_w == 3) dw::PlaneRows<3>(a, l, a.scratch);
  else if (a.kernel_h == 5 && a.kernel_w == 5) dw::PlaneRows<5>(a, l, a.scratch);
  else dw::PlaneRows<0>(a, l, a.scratch);
}

void DepthwiseBlocked(const DepthwiseBlockedArgs& a) {
  constexpr int B = Vec::kWidth;
  const bool has_act = HasActivation(a.act);
  const Vec bias = a.bias != nullptr ? Vec::Load(a.bias) : Vec::Zero();
  const int64_t kw_n = a.kernel_w;
  // Output columns whose whole window row lies inside the input.
  int64_t ow_lo = (a.pad_left + a.stride_w - 1) / a.stride_w;
  int64_t ow_hi = a.in_w - (kw_n - 1) * a.dilation_w + a.pad_left - 1;
  ow_hi = ow_hi < 0 ? 0 : ow_hi / a.stride_w + 1;
  if (ow_hi > a.out_w) ow_hi = a.out_w;
  if (ow_lo > ow_hi) ow_lo = ow_hi;
  auto finish = [&](Vec v, int64_t oh, int64_t ow) {
    const int64_t off = (oh * a.out_w + ow) * B;
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
