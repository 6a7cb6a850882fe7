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

// The row operations, as plain loops the compiler vectorizes (an ISA file may pass its own with
// masked tails instead). MaxRows: dst[i] = max over k < rows of src[k * ld + i]. Even:
// dst[i] = src[2 i], reading src[0, 2 * packed) and writing scratch[0, packed), packed being n
// rounded up to whole blocks.
struct PlainRows {
  template <typename T>
  static void MaxRows(T* __restrict dst, const T* __restrict src, int64_t ld, int64_t rows, int64_t n) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(T));
    for (int64_t k = 1; k < rows; ++k) {
      const T* __restrict s = src + k * ld;
      for (int64_t i = 0; i < n; ++i) dst[i] = std::max(dst[i], s[i]);
    }
  }
  template <typename T>
  static void Even(T* __restrict dst, const T* __restrict src, int64_t n, T* __restrict scratch, int64_t packed) {
    for (int64_t i = 0; i < packed; ++i) scratch[i] = src[2 * i];
    std::memcpy(dst, scratch, static_cast<size_t>(n) * sizeof(T));
  }
};

template <typename T, class R = PlainRows>
void Q8MaxPool2dImpl(const Q8PoolGeometry& g, const T* __restrict x, T* __restrict y, T* __restrict scratch) {
  constexpr T kLowest = std::numeric_limits<T>::lowest();
  const Q8PoolRows r = Q8PoolRowLayout(g);
  // rows: per output row of a batch, the window rows' max with the padding columns at the lowest
  // code on both sides. wide: the max over the kernel's columns at every row position an output
  // starts on. The loops over wide run over whole blocks of kQ8PoolBlock codes (the scratch has
  // the room), so they have no scalar tails; what lies past a row is never read into an output.
  // Each step runs over a batch of kQ8PoolBatch output rows before the next reads its results:
  // a load of codes stored just before waits for the store to reach the cache.
  T* __restrict rows = scratch;
  T* __restrict wide = scratch + kQ8PoolBatch * r.row;
  T* __restrict packed = wide + kQ8PoolBatch * r.wide;
  std::fill(rows, rows + kQ8PoolBatch * r.row, kLowest);
  const int64_t iw = g.in_w, kw = g.kernel_w, dw = g.dilation_w, sw = g.stride_w;
  const int64_t kh = g.kernel_h, dh = g.dilation_h;
  for (int64_t oy0 = 0; oy0 < g.out_h; oy0 += kQ8PoolBatch) {
    const int64_t batch = std::min(kQ8PoolBatch, g.out_h - oy0);
    for (int64_t b = 0; b < batch; ++b) {
      T* __restrict mid = rows + b * r.row + g.pad_left;
      // The window's rows inside the image: ky in [k0, k1).
      const int64_t start = (oy0 + b) * g.stride_h - g.pad_top;
      int64_t k0 = 0, k1 = kh;
      while (k0 < kh && start + k0 * dh < 0) ++k0;
      while (k1 > k0 && start + (k1 - 1) * dh >= g.in_h) --k1;
      if (k0 < k1)
        R::MaxRows(mid, x + (start + k0 * dh) * iw, dh * iw, k1 - k0, iw);
      else
        std::fill(mid, mid + iw, kLowest);
    }
    for (int64_t b = 0; b < batch; ++b) R::MaxRows(wide + b * r.wide, rows + b * r.row, dw, kw, r.span);
    for (int64_t b = 0; b < batch; ++b) {
      const T* __restrict w = wide + b * r.wide;
      T* __restrict out = y + (oy0 + b) * g.out_w;
      if (sw == 1) {
        std::memcpy(out, w, static_cast<size_t>(g.out_w) * sizeof(T));
      } else if (sw == 2) {
        R::Even(out, w, g.out_w, packed, r.packed);
      } else {
        for (int64_t ox = 0; ox < g.out_w; ++ox) out[ox] = w[ox * sw];
      }
    }
  }
}

}  // namespace
}  // namespace onyx::linalg
