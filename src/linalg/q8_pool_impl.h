// Body of q8_pool.h's Q8MaxPool2d, instantiated by each ISA file with its compiler flags.
// Internal linkage on purpose (see f32_gemm_tile_impl.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

#include "linalg/q8_pool.h"

namespace onyx::linalg {
namespace {

template <typename T>
void Q8MaxPool2dImpl(const Q8PoolGeometry& g, const T* __restrict x, T* __restrict y, T* __restrict scratch) {
  constexpr T kLowest = std::numeric_limits<T>::lowest();
  const int64_t width = Q8MaxPool2dScratch(g) / 2;
  // row: the window rows' max, with the padding columns at the lowest code on both sides.
  // wide: the max over the kernel's columns at every row position an output starts on.
  T* __restrict row = scratch;
  T* __restrict wide = scratch + width;
  std::fill(row, row + width, kLowest);
  T* __restrict mid = row + g.pad_left;
  const int64_t iw = g.in_w, kw = g.kernel_w, dw = g.dilation_w, sw = g.stride_w;
  const int64_t span = (g.out_w - 1) * sw + 1;  // positions an output starts on
  for (int64_t oy = 0; oy < g.out_h; ++oy) {
    const int64_t start = oy * g.stride_h - g.pad_top;
    bool any = false;
    for (int64_t ky = 0; ky < g.kernel_h; ++ky) {
      const int64_t iy = start + ky * g.dilation_h;
      if (iy < 0 || iy >= g.in_h) continue;
      const T* __restrict src = x + iy * iw;
      if (!any) {
        std::memcpy(mid, src, static_cast<size_t>(iw) * sizeof(T));
      } else {
        for (int64_t i = 0; i < iw; ++i) mid[i] = std::max(mid[i], src[i]);
      }
      any = true;
    }
    if (!any) std::fill(mid, mid + iw, kLowest);
    T* __restrict out = y + oy * g.out_w;
    T* __restrict acc = sw == 1 ? out : wide;
    std::memcpy(acc, row, static_cast<size_t>(span) * sizeof(T));
    for (int64_t kx = 1; kx < kw; ++kx) {
      const T* __restrict tap = row + kx * dw;
      for (int64_t i = 0; i < span; ++i) acc[i] = std::max(acc[i], tap[i]);
    }
    if (sw == 2) {
      for (int64_t ox = 0; ox < g.out_w; ++ox) out[ox] = wide[2 * ox];
    } else if (sw != 1) {
      for (int64_t ox = 0; ox < g.out_w; ++ox) out[ox] = wide[ox * sw];
    }
  }
}

}  // namespace
}  // namespace onyx::linalg
