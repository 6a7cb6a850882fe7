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
  const Q8PoolRows r = Q8PoolRowLayout(g);
  // row: the window rows' max, with the padding columns at the lowest code on both sides.
  // wide: the max over the kernel's columns at every row position an output starts on.
  // Both loops run over whole blocks of kQ8PoolBlock codes (the scratch has the room), so they
  // have no scalar tails; what lies past the row is never read into an output.
  T* __restrict row = scratch;
  T* __restrict wide = scratch + r.row;
  T* __restrict packed = wide + r.wide;
  std::fill(row, row + r.row, kLowest);
  T* __restrict mid = row + g.pad_left;
  const int64_t iw = g.in_w, kw = g.kernel_w, dw = g.dilation_w, sw = g.stride_w;
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
    std::memcpy(wide, row, static_cast<size_t>(r.span) * sizeof(T));
    for (int64_t kx = 1; kx < kw; ++kx) {
      const T* __restrict tap = row + kx * dw;
      for (int64_t i = 0; i < r.span; ++i) wide[i] = std::max(wide[i], tap[i]);
    }
    T* __restrict out = y + oy * g.out_w;
    if (sw == 1) {
      std::memcpy(out, wide, static_cast<size_t>(g.out_w) * sizeof(T));
    } else if (sw == 2) {
      for (int64_t ox = 0; ox < r.packed; ++ox) packed[ox] = wide[2 * ox];
      std::memcpy(out, packed, static_cast<size_t>(g.out_w) * sizeof(T));
    } else {
      for (int64_t ox = 0; ox < g.out_w; ++ox) out[ox] = wide[ox * sw];
    }
  }
}

}  // namespace
}  // namespace onyx::linalg
