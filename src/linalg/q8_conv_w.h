// A 2-D NCHW int8 convolution of one image (and group) on the weight-stationary int8 GEMM
// (q8_gemm.h's Q8GemmW) without an im2col buffer: each 32-pixel panel of the implicit im2col is
// gathered straight from the image into the kernel's packed layout while it is in L1, padding
// taps reading the zero point (so they contribute nothing):
//   acc[m, p] = sum_{c, i, j} (W[m, c, i, j] - w_zero[m]) * (X[c, y(p) + i * dy, x(p) + j * dx] - x_zero)
// with y(p) = (p / ow) * sy - top, x(p) = (p % ow) * sx - left. W is PackedQ8W [M, C * kh * kw]
// in ONNX's weight order; out as for Q8GemmW (C [M, oh * ow], the NCHW output).
#pragma once

#include <cstdint>

#include "linalg/q8_gemm.h"

namespace onyx::linalg {

struct Q8ConvShape {
  int64_t channels = 0, ih = 0, iw = 0, oh = 0, ow = 0, kh = 1, kw = 1;
  int64_t sy = 1, sx = 1, dy = 1, dx = 1, top = 0, left = 0;
};

// Where Q8GemmWAvailable() (AVX-512 VNNI selected); image: [channels, ih, iw] codes, int8 when
// x_signed else uint8.
void Q8ConvW(const PackedQ8W& w, const Q8ConvShape& s, const void* image, bool x_signed, int32_t x_zero,
             const Q8Output& out, ThreadPool* pool);

}  // namespace onyx::linalg
