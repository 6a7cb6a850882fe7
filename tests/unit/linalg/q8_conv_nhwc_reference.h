// The scalar reference of the Q8ConvNhwc tests (direct, AVX2 and AMX kernels): the exact int32
// sums of a channels-last int8 convolution, in the plainest loops.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "linalg/q8_conv_nhwc.h"

namespace onyx::linalg {

struct Q8ConvNhwcSums {
  std::vector<int64_t> sums;  // [pixel][m]
  int64_t peak = 1;           // the largest |sum|, at least 1 (the tests scale by it)
};

// sums[q * m + o] = sum over taps (i, j) and channels ch of (W[o, ch, i, j] - w_zero) *
// (X[y, x, ch] - x_zp) at output pixel q's window (s: its geometry). W: [m, C, kh, kw] codes,
// symmetric as stored (w_zero 0 for int8, 128 for uint8); X: [ih, iw, C]; padding taps read x_zp.
inline Q8ConvNhwcSums ReferenceQ8ConvNhwcSums(const Q8ConvNhwcShape& s, int64_t m, const std::vector<uint8_t>& w,
                                              bool w_signed, const std::vector<uint8_t>& x, bool x_signed,
                                              int32_t x_zp) {
  const int64_t c = s.channels, pixels = s.oh * s.ow;
  const int32_t w_zero = w_signed ? 0 : 128;
  auto xv = [&](int64_t y, int64_t xx, int64_t ch) -> int32_t {
    if (y < 0 || y >= s.ih || xx < 0 || xx >= s.iw) return x_zp;
    const uint8_t b = x[static_cast<size_t>((y * s.iw + xx) * c + ch)];
    return x_signed ? static_cast<int8_t>(b) : b;
  };
  Q8ConvNhwcSums r;
  r.sums.resize(static_cast<size_t>(pixels * m));
  for (int64_t q = 0; q < pixels; ++q)
    for (int64_t o = 0; o < m; ++o) {
      int64_t sum = 0;
      for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t i = 0; i < s.kh; ++i)
          for (int64_t j = 0; j < s.kw; ++j) {
            const uint8_t wb = w[static_cast<size_t>(((o * c + ch) * s.kh + i) * s.kw + j)];
            const int32_t wv = (w_signed ? static_cast<int8_t>(wb) : wb) - w_zero;
            sum += wv * (xv(q / s.ow * s.sy - s.top + i * s.dy, q % s.ow * s.sx - s.left + j * s.dx, ch) - x_zp);
          }
      r.sums[static_cast<size_t>(q * m + o)] = sum;
      r.peak = std::max<int64_t>(r.peak, std::abs(sum));
    }
  return r;
}

}  // namespace onyx::linalg
