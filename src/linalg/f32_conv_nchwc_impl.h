// Direct convolution tiles on blocked output channels, NCHWc <-> NCHW strip reorders and the
// row epilogues, written once against `Vec` (see simd_<isa>.h). The including file defines
// kMaxFilterBlocks and kMaxPixels[filter blocks] (the register tiles) in ONYX_SIMD_NS before
// including this.
#pragma once

#include <algorithm>
#include <cstdint>

#include "linalg/f32_conv_kernel.h"
#include "linalg/f32_conv_math_impl.h"

namespace onyx::linalg::ONYX_SIMD_NS {

// acc[p][f] accumulates output pixel p of filter block f. Each step loads FB weight vectors and
// broadcasts PX input values, so the tile needs FB * PX + FB + 1 registers.
// NC > 0: every input block holds exactly NC channels (an RGB first layer), unrolled.
// kSpan: the pixels' input offsets come from x_pixel_offsets (a tile spanning rows); else they
// are x_pixel_stride apart (fewer live registers, which the short AVX2 tiles notice).
// kUnit: ... exactly B floats apart (stride 1 on a blocked input: every pointwise conv), so each
// broadcast is one base register plus a constant; with a runtime stride GCC keeps one pointer per
// pixel and spills them on the 16-pixel tiles (mobilenet's 32 -> 16 projection ran at 76 % of peak).
// One tile: x_base is pixel 0's window origin, y and residual_in its first output pixel.
template <int FB, int PX, int NC, bool kSpan, bool kUnit>
[[gnu::always_inline]] inline void DirectTileOne(const DirectTileArgs& a, int64_t group_blocks, int64_t x_base,
                                                 float* y, const float* residual_in) {
  constexpr int B = Vec::kWidth;
  constexpr int64_t kTapFloats = int64_t{B} * B;
  // The first group starts from the bias (a single-group tile is then one plain sum); later
  // groups, and chunks after the first, start from zero and add y at their end.
  Vec acc[PX][FB];
#pragma GCC unroll 4
  for (int f = 0; f < FB; ++f) {
    const Vec b = !a.accumulate && a.bias != nullptr ? Vec::Load(a.bias + f * B) : Vec::Zero();
#pragma GCC unroll 16
    for (int p = 0; p < PX; ++p) acc[p][f] = b;
  }
  int64_t xo[PX];
#pragma GCC unroll 16
  for (int p = 0; p < PX; ++p) xo[p] = kSpan ? a.x_pixel_offsets[p] : p * (kUnit ? int64_t{B} : a.x_pixel_stride);
  const int64_t cs = a.x_channel_stride;
  const int64_t wfs = a.w_fb_stride;
  for (int64_t g0 = 0; g0 < a.in_blocks; g0 += group_blocks) {
    const int64_t g1 = std::min(a.in_blocks, g0 + group_blocks);
    for (int64_t cb = g0; cb < g1; ++cb) {
      const int64_t nc = NC > 0 ? NC : cb + 1 == a.in_blocks ? a.last_block_channels : B;
      const float* wcb = a.w + cb * a.kernel_taps * kTapFloats;
      const int64_t xcb = x_base + cb * a.x_block_stride;
      for (int64_t t = 0; t < a.taps; ++t) {
        const float* xt = a.x + (xcb + a.tap_offsets[t]);
        const float* wt = wcb + a.tap_index[t] * kTapFloats;
#pragma GCC unroll 4
        for (int64_t c = 0; c < nc; ++c) {
          Vec wv[FB];
#pragma GCC unroll 4
          for (int f = 0; f < FB; ++f) wv[f] = Vec::Load(wt + f * wfs + c * B);
          const float* xc = xt + c * cs;
#pragma GCC unroll 16
          for (int p = 0; p < PX; ++p) {
            const Vec xb = Vec::Set1(xc[xo[p]]);
#pragma GCC unroll 4
            for (int f = 0; f < FB; ++f) acc[p][f] = Vec::Fma(wv[f], xb, acc[p][f]);
          }
        }
      }
    }
    if (a.accumulate || g0 > 0) {  // add y, which holds earlier groups or chunks
#pragma GCC unroll 4
      for (int f = 0; f < FB; ++f)
#pragma GCC unroll 16
        for (int p = 0; p < PX; ++p)
          acc[p][f] = Vec::Add(acc[p][f], Vec::Load(y + f * a.y_fb_stride + p * a.y_pixel_stride));
    }
    if (g1 < a.in_blocks) {
#pragma GCC unroll 4
      for (int f = 0; f < FB; ++f)
#pragma GCC unroll 16
        for (int p = 0; p < PX; ++p) {
          Vec::Store(y + f * a.y_fb_stride + p * a.y_pixel_stride, acc[p][f]);
          acc[p][f] = Vec::Zero();
        }
    }
  }
  // The activation is picked once per tile (see WithActivation); the costly ones run over the
  // stored tile afterwards, a filter block at a time.
  const float* residual = a.finish ? residual_in : nullptr;
  const bool after = a.finish && a.act != nullptr && !IsInlineActivation(a.act->kind);
  WithActivation(a.finish && !after ? a.act : nullptr, [&](auto activate) {
#pragma GCC unroll 4
    for (int f = 0; f < FB; ++f) {
#pragma GCC unroll 16
      for (int p = 0; p < PX; ++p) {
        const int64_t off = f * a.y_fb_stride + p * a.y_pixel_stride;
        Vec v = acc[p][f];
        if (residual != nullptr) v = Vec::Add(v, Vec::Load(residual + off));
        Vec::Store(y + off, activate(v));
      }
    }
  });
  if (after)
    for (int f = 0; f < FB; ++f) ActivateVectors(y + f * a.y_fb_stride, PX, a.y_pixel_stride, *a.act);
}

template <int FB, int PX, int NC, bool kSpan, bool kUnit>
void DirectTileT(const DirectTileArgs& a) {
  constexpr int B = Vec::kWidth;
  // Each group of input blocks sums at least kPartialSumTerms products from zero before it is
  // added to the running output, as ONNX Runtime's NCHWc kernels do per channel block: one long
  // float32 chain loses about sqrt(K / kPartialSumTerms) times more than partial sums (measured
  // 5.9e-7 -> 2.2e-7 relative error on a 128-channel 3x3 layer against float64).
  // (A border tile of a padding read in place may take no tap: bias, residual and activation.)
  const int64_t group_blocks =
      a.taps > 0 ? std::max<int64_t>(1, (kPartialSumTerms + a.taps * B - 1) / (a.taps * B)) : a.in_blocks;
  // A run of equal tiles side by side (stride form) in one call: the dispatch and setup are paid
  // once per run instead of once per few pixels.
  const int64_t x_step = kSpan ? 0 : PX * (kUnit ? int64_t{B} : a.x_pixel_stride), y_step = PX * a.y_pixel_stride;
  int64_t x_base = a.x_base;
  float* y = a.y;
  const float* residual = a.residual;
  for (int64_t i = 0; i < a.tiles; ++i, x_base += x_step, y += y_step) {
    DirectTileOne<FB, PX, NC, kSpan, kUnit>(a, group_blocks, x_base, y, residual);
    if (residual != nullptr) residual += y_step;
  }
}

template <int FB, int PX>
void DispatchPixels(const DirectTileArgs& a, int pixels) {
  if constexpr (PX > 0) {
    if (pixels == PX) {
      const bool rgb = a.in_blocks == 1 && a.last_block_channels == 3;
      if (a.x_pixel_offsets != nullptr)
        return rgb ? DirectTileT<FB, PX, 3, true, false>(a) : DirectTileT<FB, PX, 0, true, false>(a);
      if (rgb) return DirectTileT<FB, PX, 3, false, false>(a);
      if (a.x_pixel_stride == Vec::kWidth) return DirectTileT<FB, PX, 0, false, true>(a);
      return DirectTileT<FB, PX, 0, false, false>(a);
    }
    return DispatchPixels<FB, PX - 1>(a, pixels);
  }
}

template <int FB>
void DispatchFilterBlocks(const DirectTileArgs& a, int filter_blocks, int pixels) {
  if constexpr (FB > 0) {
    if (filter_blocks == FB) return DispatchPixels<FB, kMaxPixels[FB]>(a, pixels);
    return DispatchFilterBlocks<FB - 1>(a, filter_blocks, pixels);
  }
}

void DirectTile(const DirectTileArgs& a, int filter_blocks, int pixels) {
  DispatchFilterBlocks<kMaxFilterBlocks>(a, filter_blocks, pixels);
}

void Unblock(const float* src, int64_t pixels, int64_t channels, float* dst, int64_t dst_stride, const float* residual,
             int64_t residual_stride, const ConvActivation* act) {
  constexpr int B = Vec::kWidth;
  const bool has_act = HasActivation(act);
  for (int64_t p0 = 0; p0 < pixels; p0 += B) {
    const int64_t n = pixels - p0 < B ? pixels - p0 : B;
    Vec r[B];
    for (int i = 0; i < B; ++i) r[i] = i < n ? Vec::Load(src + (p0 + i) * B) : Vec::Zero();
    Vec::Transpose(r);  // r[c]: channel c at pixels p0 .. p0 + B
    for (int64_t c = 0; c < channels; ++c) {
      Vec v = r[c];
      float* d = dst + c * dst_stride + p0;
      if (residual != nullptr) {
        const float* res = residual + c * residual_stride + p0;
        v = Vec::Add(v, n == B ? Vec::Load(res) : Vec::LoadPartial(res, n));
      }
      if (has_act) v = Activate(v, *act);
      if (n == B) Vec::Store(d, v);
      else Vec::StorePartial(d, v, n);
    }
  }
}

void Block(const float* src, int64_t src_stride, int64_t channels, int64_t pixels, float* dst) {
  constexpr int B = Vec::kWidth;
  for (int64_t p0 = 0; p0 < pixels; p0 += B) {
    const int64_t n = pixels - p0 < B ? pixels - p0 : B;
    Vec r[B];
    for (int c = 0; c < B; ++c) {
      const float* s = src + c * src_stride + p0;
      r[c] = c >= channels ? Vec::Zero() : n == B ? Vec::Load(s) : Vec::LoadPartial(s, n);
    }
    Vec::Transpose(r);  // r[i]: pixel p0 + i
    for (int64_t i = 0; i < n; ++i) Vec::Store(dst + (p0 + i) * B, r[i]);
  }
}

void EpilogueRow(float* y, int64_t n, float bias, const float* residual, const ConvActivation* act) {
  constexpr int B = Vec::kWidth;
  const bool has_act = HasActivation(act);
  const Vec b = Vec::Set1(bias);
  for (int64_t i = 0; i < n; i += B) {
    const int64_t m = n - i < B ? n - i : B;
    Vec v = m == B ? Vec::Load(y + i) : Vec::LoadPartial(y + i, m);
    v = Vec::Add(v, b);
    if (residual != nullptr) v = Vec::Add(v, m == B ? Vec::Load(residual + i) : Vec::LoadPartial(residual + i, m));
    if (has_act) v = Activate(v, *act);
    if (m == B) Vec::Store(y + i, v);
    else Vec::StorePartial(y + i, v, m);
  }
}

void EpilogueBlocked(float* y, int64_t pixels, const float* bias, const float* residual, const ConvActivation* act) {
  constexpr int B = Vec::kWidth;
  // A costly activation (SiLU, Sigmoid, ...) runs in a second pass with its kind picked once.
  const bool after = HasActivation(act) && !IsInlineActivation(act->kind);
  const bool has_act = HasActivation(act) && !after;
  if (bias != nullptr || residual != nullptr || has_act) {
    const Vec b = bias != nullptr ? Vec::Load(bias) : Vec::Zero();
    for (int64_t p = 0; p < pixels; ++p) {
      Vec v = Vec::Add(Vec::Load(y + p * B), b);
      if (residual != nullptr) v = Vec::Add(v, Vec::Load(residual + p * B));
      if (has_act) v = Activate(v, *act);
      Vec::Store(y + p * B, v);
    }
  }
  if (after) ActivateVectors(y, pixels, B, *act);
}

}  // namespace onyx::linalg::ONYX_SIMD_NS
